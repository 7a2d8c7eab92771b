import type { ListValueKind } from '../ingest/lists/normalise.js';
import { maskAllButLast } from '../io/mask.js';
import type { DeltaRecord } from './delta/record.js';
import type { CollectedValues } from './list-body.js';

/**
 * What replacing a list with a file's values would change, against the record of the values
 * last uploaded from here: the service never returns a list's values, so the record (keyed
 * digests, no values in clear) is the only way to know. Values are compared after the same
 * normalisation and deduplication as an upload.
 */

export interface ListChanges {
  added: number;
  removed: number;
  unchanged: number;
}

export interface ListDiff extends ListChanges {
  /** The added values, masked where personal (only when asked for). */
  added_values?: string[];
}

function valueDigest(record: DeltaRecord, value: string): Buffer {
  return record.digest('list-value', value);
}

/** The digests of the collected values, to remember after an upload. */
export function* listDigests(
  record: DeltaRecord,
  values: Pick<CollectedValues, 'length' | 'valueAt'>,
): Generator<Buffer> {
  for (let i = 0; i < values.length; i++) yield valueDigest(record, values.valueAt(i)!);
}

/** Counts against the record of `listId` (which must exist); `show` also lists the added values, masked. */
export function diffList(
  record: DeltaRecord,
  listId: number,
  kind: ListValueKind,
  values: Pick<CollectedValues, 'length' | 'valueAt'>,
  show = false,
): ListDiff {
  const known = record.list(listId);
  if (!known) throw new Error(`no record of list ${listId}`);
  const has = record.listLookup(listId);
  const addedValues: string[] = [];
  let unchanged = 0;
  for (let i = 0; i < values.length; i++) {
    const value = values.valueAt(i)!;
    if (has(valueDigest(record, value))) unchanged++;
    else if (show) addedValues.push(maskListValue(kind, value));
  }
  const added = values.length - unchanged;
  return { added, removed: known.count - unchanged, unchanged, ...(show ? { added_values: addedValues } : {}) };
}

/** SSNs, last fours, phones and routing numbers show their last digits; emails their first letter and domain. */
export function maskListValue(kind: ListValueKind, value: string): string {
  switch (kind) {
    case 'ssn':
      return /^\d{9}$/.test(value) ? `***-**-${value.slice(5)}` : maskAllButLast(value, 4);
    case 'phone':
    case 'routing':
      return maskAllButLast(value, 4);
    case 'ssn4':
      return maskAllButLast(value, 2);
    case 'email': {
      const at = value.lastIndexOf('@');
      return at > 0 ? `${value[0]}${'*'.repeat(Math.max(1, at - 1))}${value.slice(at)}` : maskAllButLast(value, 2);
    }
    default:
      return value;
  }
}

/** How many of the values last uploaded an update may remove: a count, or a percentage of them. */
export type RemovalLimit = { count: number } | { percent: number };

/** The default: a file that would remove more than half of a list is far more often cut short than meant. */
export const DEFAULT_REMOVAL_LIMIT: RemovalLimit = { percent: 50 };

/** Whether `changes` removes more of the values last uploaded than `limit` allows. */
export function removesTooMany(changes: ListChanges, limit: RemovalLimit): boolean {
  if ('count' in limit) return changes.removed > limit.count;
  const before = changes.removed + changes.unchanged;
  return before > 0 && changes.removed * 100 > limit.percent * before;
}

export function describeLimit(limit: RemovalLimit): string {
  return 'count' in limit ? limit.count.toLocaleString('en-US') : `${limit.percent}%`;
}

export function describeChanges(c: ListChanges): string {
  const n = (x: number) => x.toLocaleString('en-US');
  return `${n(c.added)} added, ${n(c.removed)} removed, ${n(c.unchanged)} unchanged`;
}
