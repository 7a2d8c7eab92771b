import { UsageError } from '../../errors.js';
import { similar } from '../../suggest.js';

/** The fields of a data dictionary entry this module relies on (structurally the schema's DataAttribute). */
export interface DictionaryEntry {
  id: string;
  category: string;
  subcategory: string;
  name: string;
  column: string;
  type: string;
}

const MAP_ID = /^m\d+$/i;

/** `lead_id,email` and repeated flags alike; blanks dropped. */
export function splitList(values: string | string[] | undefined): string[] {
  if (values === undefined) return [];
  const all = Array.isArray(values) ? values : [values];
  return all
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

function normalise(s: string): string {
  return s
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
}

/**
 * Turns what a person typed (a map id `m12`, a column name `lead_id`, or a display name
 * `Lead ID`, any case) into dictionary entries, in the order given, without duplicates.
 * Every unknown or ambiguous name is reported at once, with suggestions.
 */
export function resolveColumns(requested: string[], dictionary: readonly DictionaryEntry[]): DictionaryEntry[] {
  const byId = new Map(dictionary.map((e) => [e.id.toLowerCase(), e]));
  const byColumn = new Map<string, DictionaryEntry[]>();
  const byName = new Map<string, DictionaryEntry[]>();
  for (const e of dictionary) {
    push(byColumn, normalise(e.column), e);
    push(byName, normalise(e.name), e);
  }

  const resolved: DictionaryEntry[] = [];
  const problems: string[] = [];
  for (const raw of requested) {
    const key = normalise(raw);
    let candidates: DictionaryEntry[] | undefined;
    if (MAP_ID.test(raw.trim())) {
      const hit = byId.get(raw.trim().toLowerCase());
      candidates = hit ? [hit] : undefined;
    } else {
      candidates = byColumn.get(key) ?? byName.get(key);
    }
    if (!candidates || candidates.length === 0) {
      const hints = suggest(raw, dictionary);
      problems.push(`unknown column "${raw}"${hints.length ? ` (did you mean ${hints.join(', ')}?)` : ''}`);
      continue;
    }
    if (candidates.length > 1) {
      problems.push(
        `"${raw}" matches several columns: ${candidates.map((c) => `${c.column} (${c.id}, ${c.category} / ${c.subcategory})`).join(', ')}; use the column name or map id`,
      );
      continue;
    }
    if (!resolved.includes(candidates[0]!)) resolved.push(candidates[0]!);
  }
  if (problems.length) {
    throw new UsageError(`--columns: ${problems.join('; ')}`, {
      hint: 'see the available columns with `leadctl leads dictionary --search TERM`',
    });
  }
  return resolved;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function suggest(raw: string, dictionary: readonly DictionaryEntry[]): string[] {
  const key = normalise(raw);
  if (key === '') return [];
  // A typo first (emial → email), then columns that contain what was typed or a part of it.
  const near = similar(
    key,
    dictionary.map((e) => normalise(e.column)),
  ).map((n) => dictionary.find((e) => normalise(e.column) === n)!.column);
  const parts = key.split('_').filter((p) => p.length >= 3);
  const containing = dictionary
    .filter((e) => {
      const col = normalise(e.column);
      return col.includes(key) || key.includes(col) || parts.some((p) => col.includes(p));
    })
    .map((e) => e.column);
  return [...new Set([...near, ...containing])].slice(0, 5);
}

/** `leads dictionary --search TERM --category NAME`: a case-insensitive match on every text field. */
export function searchDictionary(
  entries: readonly DictionaryEntry[],
  options: { search?: string; category?: string },
): DictionaryEntry[] {
  const term = options.search?.trim().toLowerCase();
  const category = options.category?.trim().toLowerCase();
  return entries.filter((e) => {
    if (category && e.category.toLowerCase() !== category) return false;
    if (!term) return true;
    return [e.id, e.category, e.subcategory, e.name, e.column].some((f) => f.toLowerCase().includes(term));
  });
}

export function categoriesOf(entries: readonly DictionaryEntry[]): string[] {
  return [...new Set(entries.map((e) => e.category))];
}

/** Which columns hold data that must be masked in human output. */
export function sensitiveKind(entry: Pick<DictionaryEntry, 'column' | 'name'>): 'ssn' | 'account' | undefined {
  const c = normalise(entry.column);
  if (/(^|_)(ssn|social_security_number)($|_)/.test(c) && !/last_?four|ssn4|last4/.test(c)) return 'ssn';
  if (/account_number/.test(c)) return 'account';
  return undefined;
}
