import { sensitiveKind, type DictionaryEntry } from '../ingest/leads/columns.js';
import type { Column } from './render.js';

export interface LeadRecord {
  id: number;
  /** The service's answer: values keyed by map id. */
  data: Record<string, unknown>;
}

export interface LeadViewOptions {
  /** Keep map ids as keys instead of column names. */
  raw: boolean;
  /** Mask SSNs and bank account numbers in tables. */
  mask: boolean;
}

/**
 * The map ids to show, in order: the ones asked for, or else every one present in the answers,
 * in dictionary order, then any the dictionary does not list.
 */
export function leadKeys(
  leads: readonly LeadRecord[],
  dictionary: readonly DictionaryEntry[],
  requested?: readonly string[],
): string[] {
  if (requested?.length) return [...requested];
  const present = new Set<string>();
  for (const l of leads) for (const k of Object.keys(l.data)) present.add(k);
  const ordered = dictionary.map((e) => e.id).filter((id) => present.has(id));
  const known = new Set(ordered);
  const extra = [...present]
    .filter((k) => !known.has(k))
    .sort((a, b) => mapIdNumber(a) - mapIdNumber(b) || a.localeCompare(b));
  return [...ordered, ...extra];
}

function mapIdNumber(id: string): number {
  const m = /^m(\d+)$/.exec(id);
  return m ? Number(m[1]) : Number.MAX_SAFE_INTEGER;
}

/** Output columns: named by the dictionary's column names (or map ids with --raw), masked where personal. */
export function leadColumns(
  keys: readonly string[],
  dictionary: readonly DictionaryEntry[],
  options: LeadViewOptions,
): Column<LeadRecord>[] {
  const byId = new Map(dictionary.map((e) => [e.id, e]));
  return keys.map((id) => {
    const entry = byId.get(id);
    const name = options.raw || !entry ? id : entry.column;
    const kind = entry ? sensitiveKind(entry) : undefined;
    return {
      key: name,
      header: name,
      value: (lead: LeadRecord) => lead.data[id],
      ...(options.mask && kind ? { mask: kind } : {}),
    };
  });
}
