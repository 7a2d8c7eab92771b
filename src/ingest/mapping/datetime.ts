import { DateTime, Info, type Zone } from 'luxon';
import { quoteValue } from '../../errors.js';
import { isCalendarDate } from '../../schema/common.js';
import { MAX_OFFSET_MINUTES } from '../date-flags.js';

/**
 * Dates and datetimes of an export → the API's `YYYY-MM-DD` and UTC `YYYY-MM-DDTHH:mm:ssZ`.
 *
 * Formats use luxon's tokens (`M/d/yyyy h:mm a`). luxon parses; but `DateTime.fromFormat` costs
 * ~25 µs and a zone conversion ~5 µs, too slow for a million rows, so the common tokens are
 * compiled here into the same regular expression luxon would build, and zone offsets are cached
 * per local day. Anything the fast path does not recognise goes to luxon itself, and tests compare
 * the two on generated inputs (test/unit/ingest/mapping/datetime.test.ts).
 *
 * Local times that happen twice (clocks going back) are read as the first occurrence, and times
 * that never happen (clocks going forward) are moved forward by the gap: the "compatible" rule of
 * Temporal and java.time. luxon's own choice depends on today's date, so it is not used for that.
 */

export type ParseResult = { ok: true; value: string } | { ok: false; reason: string };

/** Keywords accepted in place of a format. */
export const ISO_FORMAT = 'iso';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export function resolveZone(name: string): Zone | undefined {
  const zone = Info.normalizeZone(name);
  return zone?.isValid ? zone : undefined;
}

// ------------------------------------------------------------------ format compiling

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** A compiled format: returns the wall-clock fields, or undefined when the text does not fit. */
type FieldReader = (text: string) => Fields | undefined;

type FastToken = 'yyyy' | 'M' | 'MM' | 'd' | 'dd' | 'H' | 'HH' | 'h' | 'hh' | 'm' | 'mm' | 's' | 'ss' | 'a';
const FAST_TOKENS: Record<FastToken, string> = {
  yyyy: '(\\d{4})',
  M: '(\\d{1,2})',
  MM: '(\\d{2})',
  d: '(\\d{1,2})',
  dd: '(\\d{2})',
  H: '(\\d{1,2})',
  HH: '(\\d{2})',
  h: '(\\d{1,2})',
  hh: '(\\d{2})',
  m: '(\\d{1,2})',
  mm: '(\\d{2})',
  s: '(\\d{1,2})',
  ss: '(\\d{2})',
  a: '(AM|PM)',
};

type Part = { token: string } | { literal: string };

/** Splits a luxon format into tokens (runs of one letter) and literals (quoted or not). */
export function tokenizeFormat(format: string): Part[] {
  const parts: Part[] = [];
  let i = 0;
  while (i < format.length) {
    const c = format[i]!;
    if (c === "'") {
      const end = format.indexOf("'", i + 1);
      const text = end === -1 ? format.slice(i + 1) : format.slice(i + 1, end);
      parts.push({ literal: text === '' ? "'" : text });
      i = end === -1 ? format.length : end + 1;
    } else if (/[A-Za-z]/.test(c)) {
      let j = i;
      while (j < format.length && format[j] === c) j++;
      parts.push({ token: format.slice(i, j) });
      i = j;
    } else {
      parts.push({ literal: c });
      i++;
    }
  }
  return parts;
}

function escapeRegex(text: string): string {
  return text.replace(/[-[\]{}()*+?.,\\^$|#\s]/g, '\\$&');
}

/** The fast reader for formats made only of common tokens; undefined when luxon must do it. */
function compileFast(format: string): FieldReader | undefined {
  const parts = tokenizeFormat(format);
  let source = '^';
  const order: FastToken[] = [];
  for (const part of parts) {
    if ('literal' in part) {
      source += `(${escapeRegex(part.literal)})`;
      order.push('literal' as FastToken);
      continue;
    }
    if (!(part.token in FAST_TOKENS)) return undefined;
    source += `(${FAST_TOKENS[part.token as FastToken]})`;
    order.push(part.token as FastToken);
  }
  source += '$';
  const has = (t: string) => order.includes(t as FastToken);
  if (!has('yyyy') || !(has('M') || has('MM')) || !(has('d') || has('dd'))) return undefined;
  if (has('a') && (has('H') || has('HH'))) return undefined; // luxon refuses it: let it say so
  const scanner = compileScanner(parts);
  if (scanner !== undefined) return scanner;
  // Each token sits in an outer group, and a token's own group inside it, as luxon's regex does.
  const regex = new RegExp(source, 'i');
  return (text) => {
    const m = regex.exec(text);
    if (m === null) return undefined;
    const f: Fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
    let meridiem = -1;
    let h12: number | undefined;
    let g = 1;
    for (const token of order) {
      if ((token as string) === 'literal') {
        g += 1;
        continue;
      }
      const raw = m[g + 1]!;
      g += 2;
      switch (token) {
        case 'yyyy':
          f.year = Number(raw);
          break;
        case 'M':
        case 'MM':
          f.month = Number(raw);
          break;
        case 'd':
        case 'dd':
          f.day = Number(raw);
          break;
        case 'H':
        case 'HH':
          f.hour = Number(raw);
          break;
        case 'h':
        case 'hh':
          h12 = Number(raw);
          break;
        case 'm':
        case 'mm':
          f.minute = Number(raw);
          break;
        case 's':
        case 'ss':
          f.second = Number(raw);
          break;
        case 'a':
          meridiem = raw.toUpperCase() === 'PM' ? 1 : 0;
          break;
      }
    }
    if (h12 !== undefined) {
      // luxon's rule, including its leniency for 13–23 with a meridiem.
      f.hour = h12 < 12 && meridiem === 1 ? h12 + 12 : h12 === 12 && meridiem === 0 ? 0 : h12;
    }
    return f;
  };
}

type Step =
  | { kind: 'literal'; text: string }
  | { kind: 'digits'; min: number; max: number; token: FastToken }
  | { kind: 'meridiem' };

/**
 * The same reading as the regular expression, by walking the characters (no match array, no
 * strings): for formats where the regex cannot backtrack, i.e. every 1–2 digit token is followed
 * by the end, AM/PM or a literal starting with a non-digit, and no literal has letters (the regex
 * compares those case-insensitively). Other formats keep the regex.
 */
function compileScanner(parts: readonly Part[]): FieldReader | undefined {
  const steps: Step[] = [];
  for (const part of parts) {
    if ('literal' in part) {
      if (part.literal.toLowerCase() !== part.literal.toUpperCase()) return undefined;
      steps.push({ kind: 'literal', text: part.literal });
    } else if (part.token === 'a') {
      steps.push({ kind: 'meridiem' });
    } else {
      const width = part.token === 'yyyy' ? 4 : part.token.length === 2 ? 2 : 0;
      steps.push({ kind: 'digits', min: width || 1, max: width || 2, token: part.token as FastToken });
    }
  }
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!;
    if (step.kind !== 'digits' || step.min === step.max) continue;
    const next = steps[i + 1];
    if (next === undefined || next.kind === 'meridiem') continue;
    if (next.kind === 'digits') return undefined;
    const first = next.text.charCodeAt(0);
    if (first >= 48 && first <= 57) return undefined;
  }
  return (text) => {
    const f: Fields = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
    let meridiem = -1;
    let h12: number | undefined;
    let at = 0;
    for (let i = 0; i < steps.length; i++) {
      const step = steps[i]!;
      if (step.kind === 'literal') {
        if (!text.startsWith(step.text, at)) return undefined;
        at += step.text.length;
      } else if (step.kind === 'meridiem') {
        const c0 = text.charCodeAt(at) | 0x20;
        const c1 = text.charCodeAt(at + 1) | 0x20;
        if ((c0 !== 97 /* a */ && c0 !== 112) /* p */ || c1 !== 109 /* m */) return undefined;
        meridiem = c0 === 112 ? 1 : 0;
        at += 2;
      } else {
        let n = 0;
        let count = 0;
        while (count < step.max) {
          const d = text.charCodeAt(at) - 48;
          if (!(d >= 0 && d <= 9)) break;
          n = n * 10 + d;
          at++;
          count++;
        }
        if (count < step.min) return undefined;
        switch (step.token) {
          case 'yyyy':
            f.year = n;
            break;
          case 'M':
          case 'MM':
            f.month = n;
            break;
          case 'd':
          case 'dd':
            f.day = n;
            break;
          case 'H':
          case 'HH':
            f.hour = n;
            break;
          case 'h':
          case 'hh':
            h12 = n;
            break;
          case 'm':
          case 'mm':
            f.minute = n;
            break;
          case 's':
          case 'ss':
            f.second = n;
            break;
        }
      }
    }
    if (at !== text.length) return undefined;
    if (h12 !== undefined) f.hour = h12 < 12 && meridiem === 1 ? h12 + 12 : h12 === 12 && meridiem === 0 ? 0 : h12;
    return f;
  };
}

/** Field ranges the fast path accepts; anything else is left to luxon, which decides. */
function inFastRange(f: Fields): boolean {
  return (
    f.year >= 1000 &&
    isCalendarDate(f.year, f.month, f.day) &&
    f.hour >= 0 &&
    f.hour <= 23 &&
    f.minute <= 59 &&
    f.second <= 59
  );
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

function formatDate(year: number, month: number, day: number): string {
  return `${pad(year, 4)}-${pad(month)}-${pad(day)}`;
}

/** `YYYY-MM-DDT` of each UTC day met so far: most of a datetime's text is its day. */
const dayPrefixes = new Map<number, string | null>();
const TWO = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));

function formatInstant(ms: number): string | undefined {
  const day = Math.floor(ms / DAY);
  let prefix = dayPrefixes.get(day);
  if (prefix === undefined) {
    const d = new Date(day * DAY);
    const year = d.getUTCFullYear();
    prefix = year >= 1000 && year <= 9999 ? d.toISOString().slice(0, 11) : null;
    if (dayPrefixes.size > 100_000) dayPrefixes.clear();
    dayPrefixes.set(day, prefix);
  }
  if (prefix === null) return undefined;
  const seconds = Math.floor((ms - day * DAY) / 1000);
  return `${prefix}${TWO[Math.floor(seconds / 3600)]}:${TWO[Math.floor(seconds / 60) % 60]}:${TWO[seconds % 60]}Z`;
}

function hasOffsetToken(format: string): boolean {
  return tokenizeFormat(format).some((p) => 'token' in p && /^[Zz]+$/.test(p.token));
}

// ------------------------------------------------------------------ zones

/**
 * Local wall-clock time (as if UTC, in ms) → UTC instant in `zone`, with the "compatible" rule.
 * Offsets are cached per local day: a day whose offset is the same well before and well after it
 * has no transition in it (real zones never change twice within two days).
 */
export class ZoneConverter {
  /** By day number (a small integer: a day's start in ms is not, and is slower to look up). */
  private readonly days = new Map<number, number | null>();
  /** For days with a transition: the offset (ms) of each local hour that has none inside it. */
  private readonly hours = new Map<number, number | null>();

  constructor(readonly zone: Zone) {}

  toInstant(localMs: number): number {
    const day = Math.floor(localMs / DAY);
    const dayStart = day * DAY;
    let offset = this.days.get(day);
    if (offset === undefined) {
      const before = this.zone.offset(dayStart - 15 * HOUR);
      const after = this.zone.offset(dayStart + DAY + 13 * HOUR);
      offset = before === after ? before : null;
      if (this.days.size > 100_000) this.days.clear();
      this.days.set(day, offset);
    }
    if (offset !== null) return localMs - offset * 60_000;
    return this.hourly(localMs);
  }

  /**
   * Transition days: an hour whose first and last moments get the same offset has no transition
   * inside it (real zones never change twice within an hour), so the whole hour shares it.
   */
  private hourly(localMs: number): number {
    const hourStart = Math.floor(localMs / HOUR) * HOUR;
    let shift = this.hours.get(hourStart);
    if (shift === undefined) {
      const first = hourStart - this.exact(hourStart);
      const last = hourStart + HOUR - 1 - this.exact(hourStart + HOUR - 1);
      shift = first === last ? first : null;
      if (this.hours.size > 10_000) this.hours.clear();
      this.hours.set(hourStart, shift);
    }
    return shift === null ? this.exact(localMs) : localMs - shift;
  }

  /** Only for the few days with a transition. */
  private exact(localMs: number): number {
    const earlier = this.zone.offset(localMs - 40 * HOUR);
    const later = this.zone.offset(localMs + 40 * HOUR);
    const fits = (o: number) => this.zone.offset(localMs - o * 60_000) === o;
    const earlierFits = fits(earlier);
    if (earlierFits) return localMs - earlier * 60_000; // unambiguous, or the first of two occurrences
    if (fits(later)) return localMs - later * 60_000;
    return localMs - earlier * 60_000; // a skipped time: moved forward by the gap
  }
}

// ------------------------------------------------------------------ parsers

const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$/;

export type DateParser = (text: string) => ParseResult;

/** `formats` in order; the first that fits wins. Returns `YYYY-MM-DD`. */
export function compileDateParser(formats: readonly string[]): DateParser {
  const readers = formats.map((format) => compileReader(format));
  const expected = describeFormats(formats);
  return (text) => {
    let outside = false;
    for (const read of readers) {
      const f = read(text);
      if (f === undefined) continue;
      if (f === null) return { ok: false, reason: `${quoteValue(text)} is not a real date` };
      // As for date-times: year 26 is a cell a spreadsheet or a hand cut short, not a date to send
      // (unless a later format reads it otherwise: `M/d/yy` after `M/d/y`).
      if (f.year < 1000 || f.year > 9999) {
        outside = true;
        continue;
      }
      return { ok: true, value: formatDate(f.year, f.month, f.day) };
    }
    if (outside) return { ok: false, reason: `${quoteValue(text)} is outside the years 1000–9999` };
    return { ok: false, reason: `${quoteValue(text)} does not match ${expected}` };
  };
}

/** `formats` in order; wall-clock times are in `zone`. Returns UTC `YYYY-MM-DDTHH:mm:ssZ`. */
const converters = new Map<string, ZoneConverter>();

/** One converter (and so one offset cache) per zone for the whole run. */
function converterFor(zone: Zone): ZoneConverter {
  let converter = converters.get(zone.name);
  if (!converter) converters.set(zone.name, (converter = new ZoneConverter(zone)));
  return converter;
}

export function compileDateTimeParser(formats: readonly string[], zone: Zone): DateParser {
  const converter = converterFor(zone);
  const readers = formats.map((format) => compileInstantReader(format, converter));
  const expected = describeFormats(formats);
  return (text) => {
    for (const read of readers) {
      const ms = read(text);
      if (ms === undefined) continue;
      if (ms === null) return { ok: false, reason: `${quoteValue(text)} is not a real date and time` };
      const value = formatInstant(ms);
      if (value === undefined) return { ok: false, reason: `${quoteValue(text)} is outside the years 1000–9999` };
      return { ok: true, value };
    }
    return { ok: false, reason: `${quoteValue(text)} does not match ${expected}` };
  };
}

function describeFormats(formats: readonly string[]): string {
  const shown = formats.map((f) => (f === ISO_FORMAT ? 'ISO 8601 (YYYY-MM-DD…)' : f));
  return shown.length === 1 ? shown[0]! : `any of: ${shown.join(' | ')}`;
}

/** undefined = does not fit this format; null = fits but names no real date. */
type Reader = (text: string) => Fields | null | undefined;

function compileReader(format: string): Reader {
  if (format === ISO_FORMAT) {
    return (text) => {
      const m = ISO_DATE.exec(text);
      if (m === null) return undefined;
      const f = { year: +m[1]!, month: +m[2]!, day: +m[3]!, hour: 0, minute: 0, second: 0 };
      return isCalendarDate(f.year, f.month, f.day) ? f : null;
    };
  }
  const fast = compileFast(format);
  return (text) => {
    if (fast) {
      const f = fast(text);
      if (f !== undefined && inFastRange(f)) return f;
    }
    return viaLuxon(format, text);
  };
}

/** luxon decides: undefined when the text does not fit, null when luxon calls it impossible. */
function viaLuxon(format: string, text: string): Fields | null | undefined {
  const parsed = DateTime.fromFormat(text, format, { zone: 'UTC' });
  if (parsed.isValid)
    return {
      year: parsed.year,
      month: parsed.month,
      day: parsed.day,
      hour: parsed.hour,
      minute: parsed.minute,
      second: parsed.second,
    };
  return parsed.invalidReason === 'unit out of range' ? null : undefined;
}

type InstantReader = (text: string) => number | null | undefined;

function compileInstantReader(format: string, converter: ZoneConverter): InstantReader {
  if (format === ISO_FORMAT) {
    return (text) => {
      const m = ISO_UTC.exec(text);
      if (m !== null) {
        const f = { year: +m[1]!, month: +m[2]!, day: +m[3]!, hour: +m[4]!, minute: +m[5]!, second: +m[6]! };
        return inFastRange(f) ? Date.UTC(f.year, f.month - 1, f.day, f.hour, f.minute, f.second) : null;
      }
      if (!/^\d{4}-\d{2}-\d{2}/.test(text)) return undefined;
      // Other ISO forms: with an offset it names an instant; without one it is wall-clock time.
      const withOffset = DateTime.fromISO(text, { zone: 'UTC', setZone: true });
      if (!withOffset.isValid) return withOffset.invalidReason === 'unit out of range' ? null : undefined;
      if (/(Z|[+-]\d{2}(:?\d{2})?)$/i.test(text))
        return Math.abs(withOffset.offset) > MAX_OFFSET_MINUTES ? null : withOffset.toMillis();
      return converter.toInstant(localMs(withOffset));
    };
  }
  if (hasOffsetToken(format)) {
    return (text) => {
      const parsed = DateTime.fromFormat(text, format, { zone: converter.zone, setZone: true });
      if (parsed.isValid) return Math.abs(parsed.offset) > MAX_OFFSET_MINUTES ? null : parsed.toMillis();
      return parsed.invalidReason === 'unit out of range' ? null : undefined;
    };
  }
  const read = compileReader(format);
  return (text) => {
    const f = read(text);
    if (f === undefined || f === null) return f;
    return converter.toInstant(wallClockMs(f.year, f.month, f.day, f.hour, f.minute, f.second));
  };
}

function localMs(dt: DateTime): number {
  return wallClockMs(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second);
}

/** Date.UTC, except that years 0–99 stay themselves (Date.UTC reads them as 1900–1999). */
function wallClockMs(year: number, month: number, day: number, hour: number, minute: number, second: number): number {
  if (year >= 100) return Date.UTC(year, month - 1, day, hour, minute, second);
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return d.getTime();
}

/** Checks a format once, so a mapping with a typo fails before any row is read. */
export function checkFormat(format: string): string | null {
  if (format === ISO_FORMAT) return null;
  const parts = tokenizeFormat(format);
  const tokens = parts.filter((p): p is { token: string } => 'token' in p).map((p) => p.token);
  if (
    !tokens.some((t) => /^[yu]+$/.test(t)) ||
    !tokens.some((t) => /^[ML]+$/.test(t)) ||
    !tokens.some((t) => /^d+$/.test(t))
  ) {
    return `format "${format}" needs a year (yyyy), a month (M or MM) and a day (d or dd)`;
  }
  if (tokens.some((t) => t === 'a') && tokens.some((t) => /^H+$/.test(t))) {
    return `format "${format}" mixes a 24-hour hour (H) with AM/PM (a); use h with a`;
  }
  try {
    DateTime.fromFormat('', format);
  } catch (err) {
    return `format "${format}": ${(err as Error).message}`;
  }
  return null;
}
