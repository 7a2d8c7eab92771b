/**
 * Cell text → API values: money, whole numbers, booleans and enum names. Each converter returns
 * the value, or a reason in words; none throws, because a bad cell rejects a record, not the run.
 */

import { quoteValue } from '../../errors.js';

export type Converted<T> = { ok: true; value: T } | { ok: false; reason: string };

export type MoneyUnit = 'dollars' | 'cents';

const DOLLARS = /^(\d{1,3}(?:,\d{3})+|\d+)?(?:\.(\d*))?$/;
const WHOLE = /^(\d{1,3}(?:,\d{3})+|\d+)$/;

/**
 * `$1,234.50`, `-$5`, `($12.00)`, `1234.5` in dollars; `123450` or `-500` in cents → integer cents.
 * Sub-cent amounts (`$1.005`) are refused rather than rounded: rounding money silently is how
 * reports stop adding up.
 */
export function parseMoney(text: string, unit: MoneyUnit): Converted<number> {
  const fast = unit === 'dollars' ? fastDollars(text) : undefined;
  if (fast !== undefined) return { ok: true, value: fast };
  return parseMoneyGeneral(text, unit);
}

/** The general reader, for every shape; exported so tests can hold the fast path to it. */
export function parseMoneyGeneral(text: string, unit: MoneyUnit): Converted<number> {
  let s = text.trim();
  let negative = false;
  if (s.startsWith('(') && s.endsWith(')')) {
    negative = true;
    s = s.slice(1, -1).trim();
  }
  if (s.startsWith('-')) {
    if (negative) return bad(text, unit);
    negative = true;
    s = s.slice(1).trim();
  }
  if (s.startsWith('$')) s = s.slice(1).trim();
  if (s.startsWith('-') && !negative) {
    negative = true;
    s = s.slice(1).trim();
  }
  if (unit === 'cents') {
    const m = WHOLE.exec(s);
    if (m === null) {
      if (/^[\d,]+\.\d*$/.test(s)) return { ok: false, reason: `${quoteValue(text)} is not a whole number of cents` };
      return bad(text, unit);
    }
    return finish(Number(m[1]!.replace(/,/g, '')), negative, text);
  }
  const m = DOLLARS.exec(s);
  if (m === null || (m[1] === undefined && !m[2])) return bad(text, unit);
  const whole = m[1] === undefined ? 0 : Number(m[1].replace(/,/g, ''));
  const fraction = m[2] ?? '';
  if (/[1-9]/.test(fraction.slice(2))) return { ok: false, reason: `${quoteValue(text)} has a fraction of a cent` };
  const cents = fraction === '' ? 0 : Number(fraction.slice(0, 2).padEnd(2, '0'));
  return finish(whole * 100 + cents, negative, text);
}

/**
 * The shape nearly every amount of an export has, `$1,234.56` or `1234.56` (optionally in
 * parentheses), read in one pass without allocating; anything else (or any doubt) → undefined,
 * and the general parser above decides.
 */
function fastDollars(text: string): number | undefined {
  let i = 0;
  let end = text.length;
  let negative = false;
  if (text.charCodeAt(0) === 40 /* ( */ && text.charCodeAt(end - 1) === 41 /* ) */) {
    negative = true;
    i = 1;
    end--;
  }
  if (text.charCodeAt(i) === 36 /* $ */) i++;
  let whole = 0;
  let digits = 0;
  let group = -1; // digits since the last comma; -1 before any comma
  for (; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      whole = whole * 10 + (c - 48);
      digits++;
      if (group >= 0) group++;
      continue;
    }
    if (c === 44 /* , */) {
      if (digits === 0 || (group >= 0 ? group !== 3 : digits > 3)) return undefined;
      group = 0;
      continue;
    }
    break;
  }
  if (digits === 0 || (group >= 0 && group !== 3)) return undefined;
  if (i === end)
    return Number.isSafeInteger(whole * 100) ? (negative && whole !== 0 ? -whole * 100 : whole * 100) : undefined;
  if (text.charCodeAt(i) !== 46 /* . */ || end - i !== 3) return undefined;
  const d1 = text.charCodeAt(i + 1) - 48;
  const d2 = text.charCodeAt(i + 2) - 48;
  if (d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return undefined;
  const cents = whole * 100 + d1 * 10 + d2;
  if (!Number.isSafeInteger(cents)) return undefined;
  return negative && cents !== 0 ? -cents : cents;
}

function finish(cents: number, negative: boolean, text: string): Converted<number> {
  if (!Number.isSafeInteger(cents)) return { ok: false, reason: `${quoteValue(text)} is too large` };
  return { ok: true, value: negative && cents !== 0 ? -cents : cents };
}

function bad(text: string, unit: MoneyUnit): Converted<number> {
  return {
    ok: false,
    reason:
      unit === 'dollars'
        ? `${quoteValue(text)} is not an amount in dollars (like $1,234.56)`
        : `${quoteValue(text)} is not a whole number of cents`,
  };
}

/** A service id (lead_id, management_system_id): digits only. */
export function parseWholeNumber(text: string): Converted<number> {
  const s = text.trim();
  if (!/^\d+$/.test(s)) return { ok: false, reason: `${quoteValue(text)} is not a whole number` };
  const n = Number(s);
  if (!Number.isSafeInteger(n)) return { ok: false, reason: `${quoteValue(text)} is too large` };
  return { ok: true, value: n };
}

const TRUE_WORDS = new Set(['y', 'yes', 'true', '1', 't']);
const FALSE_WORDS = new Set(['n', 'no', 'false', '0', 'f']);

const TRUE: Converted<boolean> = { ok: true, value: true };
const FALSE: Converted<boolean> = { ok: true, value: false };

/** Y/N, yes/no, true/false, 1/0 (and T/F), any case. */
export function parseBoolean(text: string): Converted<boolean> {
  const s = text.trim().toLowerCase();
  if (TRUE_WORDS.has(s)) return TRUE;
  if (FALSE_WORDS.has(s)) return FALSE;
  return { ok: false, reason: `${quoteValue(text)} is not a yes/no value (Y/N, yes/no, true/false, 1/0)` };
}

/** Case, spaces and punctuation do not matter when matching names: `PAID_IN_FULL` = `Paid In Full`. */
export function looseKey(text: string): string {
  return text.toLowerCase().replace(/[^a-z0-9]/g, '');
}

/** Matches a value against an enum's names loosely and returns the exact name. */
export function enumMatcher(values: readonly string[]): (text: string) => Converted<string> {
  const byKey = new Map(values.map((v) => [looseKey(v), v]));
  const listed = values.join(', ');
  // An export spells each value a handful of ways: remember the answers for them.
  const seen = new Map<string, Converted<string>>();
  return (text) => {
    let result = seen.get(text);
    if (result !== undefined) return result;
    const exact = byKey.get(looseKey(text));
    result =
      exact !== undefined
        ? { ok: true, value: exact }
        : { ok: false, reason: `${quoteValue(text)} is not one of: ${listed} (add it to the field's "values" map)` };
    if (seen.size < 1000) seen.set(text, result);
    return result;
  };
}
