import fc from 'fast-check';
import { DateTime } from 'luxon';
import { describe, expect, it } from 'vitest';
import {
  checkFormat,
  compileDateParser,
  compileDateTimeParser,
  resolveZone,
  ZoneConverter,
} from '../../../../src/ingest/mapping/datetime.js';

const chicago = resolveZone('America/Chicago')!;
const parse = (formats: string[], text: string, zone = chicago) => compileDateTimeParser(formats, zone)(text);

describe('datetimes in a local zone → UTC', () => {
  it('writes any second of years 1000–9999 as Date does, whatever came before (cached days and times)', () => {
    const utc = resolveZone('UTC')!;
    const read = compileDateTimeParser(["yyyy-MM-dd'T'HH:mm:ss"], utc);
    const lo = Date.UTC(1000, 0, 1);
    const hi = Date.UTC(9999, 11, 31, 23, 59, 59);
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: lo / 1000, max: hi / 1000 }), { minLength: 1, maxLength: 20 }),
        (seconds) => {
          for (const s of seconds) {
            const iso = `${new Date(s * 1000).toISOString().slice(0, 19)}Z`;
            expect(read(iso.slice(0, 19))).toEqual({ ok: true, value: iso });
          }
        },
      ),
      { numRuns: 300 },
    );
  });
  it('converts the LMS format, standard time', () => {
    expect(parse(['M/d/yyyy h:mm a'], '11/20/2026 6:05 PM')).toEqual({ ok: true, value: '2026-11-21T00:05:00Z' });
  });
  it('converts daylight time', () => {
    expect(parse(['M/d/yyyy h:mm a'], '7/4/2026 12:00 PM')).toEqual({ ok: true, value: '2026-07-04T17:00:00Z' });
  });
  it('is right on both sides of the spring-forward gap', () => {
    expect(parse(['M/d/yyyy h:mm a'], '3/8/2026 1:59 AM')).toEqual({ ok: true, value: '2026-03-08T07:59:00Z' });
    expect(parse(['M/d/yyyy h:mm a'], '3/8/2026 3:01 AM')).toEqual({ ok: true, value: '2026-03-08T08:01:00Z' });
  });
  it('moves a time that never happened forward by the gap', () => {
    // 2:30 AM does not exist on 3/8/2026 in Chicago: it is read as 3:30 CDT.
    expect(parse(['M/d/yyyy h:mm a'], '3/8/2026 2:30 AM')).toEqual({ ok: true, value: '2026-03-08T08:30:00Z' });
  });
  it('reads the repeated hour of fall-back as its first occurrence', () => {
    expect(parse(['M/d/yyyy h:mm a'], '11/1/2026 1:30 AM')).toEqual({ ok: true, value: '2026-11-01T06:30:00Z' });
    expect(parse(['M/d/yyyy h:mm a'], '11/1/2026 2:30 AM')).toEqual({ ok: true, value: '2026-11-01T08:30:00Z' });
    expect(parse(['M/d/yyyy h:mm a'], '11/1/2026 12:59 AM')).toEqual({ ok: true, value: '2026-11-01T05:59:00Z' });
  });
  it('tries formats in order', () => {
    expect(parse(['M/d/yyyy h:mm a', 'M/d/yyyy'], '11/20/2026')).toEqual({ ok: true, value: '2026-11-20T06:00:00Z' });
  });
  it('says why a value is refused', () => {
    const impossible = parse(['M/d/yyyy h:mm a'], '13/45/2026 9:00 AM');
    expect(!impossible.ok && impossible.reason).toMatch(/not a real date/);
    const wrong = parse(['M/d/yyyy h:mm a'], 'yesterday');
    expect(!wrong.ok && wrong.reason).toMatch(/does not match M\/d\/yyyy h:mm a/);
  });
  it('accepts ISO forms: UTC as is, offsets converted, bare local times in the zone', () => {
    const iso = compileDateTimeParser(['iso'], chicago);
    expect(iso('2026-11-20T18:05:00Z')).toEqual({ ok: true, value: '2026-11-20T18:05:00Z' });
    expect(iso('2026-11-20T18:05:00-06:00')).toEqual({ ok: true, value: '2026-11-21T00:05:00Z' });
    expect(iso('2026-11-20T18:05:00')).toEqual({ ok: true, value: '2026-11-21T00:05:00Z' });
    expect(iso('2026-02-30T00:00:00Z').ok).toBe(false);
  });
  it('refuses a zone offset beyond ±14:00, in ISO and in formats with an offset token', () => {
    const iso = compileDateTimeParser(['iso'], chicago);
    expect(iso('2026-11-20T18:05:00+14:00')).toEqual({ ok: true, value: '2026-11-20T04:05:00Z' });
    expect(iso('2026-11-20T18:05:00+25:00').ok).toBe(false);
    expect(iso('2026-11-20T18:05:00-14:30').ok).toBe(false);
    expect(parse(['yyyy-MM-dd HH:mm ZZ'], '2026-11-20 18:05 +15:00').ok).toBe(false);
  });
  it('hands formats it does not compile to luxon (month names, offsets)', () => {
    expect(parse(['dd MMM yyyy HH:mm'], '20 Nov 2026 18:05')).toEqual({ ok: true, value: '2026-11-21T00:05:00Z' });
    expect(parse(['yyyy-MM-dd HH:mm ZZ'], '2026-11-20 18:05 -05:00')).toEqual({
      ok: true,
      value: '2026-11-20T23:05:00Z',
    });
  });
});

describe('dates', () => {
  it('reformats without any zone arithmetic', () => {
    const date = compileDateParser(['M/d/yyyy']);
    expect(date('3/8/2026')).toEqual({ ok: true, value: '2026-03-08' });
    expect(date('2/29/2026').ok).toBe(false);
    expect(date('2/29/2028')).toEqual({ ok: true, value: '2028-02-29' });
    expect(compileDateParser(['iso'])('2026-12-04')).toEqual({ ok: true, value: '2026-12-04' });
  });

  it('refuses a year outside 1000–9999, as date-times do (a year typed or cut short: 0026)', () => {
    const date = compileDateParser(['M/d/yyyy']);
    expect(date('2/1/0026')).toEqual({ ok: false, reason: '"2/1/0026" is outside the years 1000–9999' });
    expect(date('2/1/0999').ok).toBe(false);
    expect(date('2/1/1000')).toEqual({ ok: true, value: '1000-02-01' });
    expect(compileDateParser(['iso'])('0026-02-01').ok).toBe(false);
    // A later format that reads the year otherwise is still tried.
    expect(compileDateParser(['M/d/y', 'M/d/yy'])('2/1/26')).toEqual({ ok: true, value: '2026-02-01' });
  });
});

describe('checkFormat', () => {
  it('accepts complete formats and names what is wrong with the others', () => {
    expect(checkFormat('M/d/yyyy h:mm a')).toBeNull();
    expect(checkFormat('h:mm a')).toMatch(/needs a year/);
    expect(checkFormat('M/d/yyyy H:mm a')).toMatch(/mixes/);
  });
});

/** The compatible rule, computed independently: among the instants that show this wall time, the earliest; none → shift by the gap. */
function reference(zone: string, y: number, mo: number, d: number, h: number, mi: number): string {
  const wall = { year: y, month: mo, day: d, hour: h, minute: mi };
  const candidates: number[] = [];
  const base = Date.UTC(y, mo - 1, d, h, mi);
  for (let offset = -14 * 60; offset <= 14 * 60; offset += 15) {
    const instant = base - offset * 60_000;
    const local = DateTime.fromMillis(instant, { zone });
    if (
      local.year === wall.year &&
      local.month === wall.month &&
      local.day === wall.day &&
      local.hour === wall.hour &&
      local.minute === wall.minute
    )
      candidates.push(instant);
  }
  if (candidates.length) return new Date(Math.min(...candidates)).toISOString().slice(0, 19) + 'Z';
  const before = DateTime.fromMillis(base - 40 * 3_600_000, { zone }).offset;
  return new Date(base - before * 60_000).toISOString().slice(0, 19) + 'Z';
}

describe('the fast path agrees with luxon', () => {
  it('on generated times in several zones, DST days included', () => {
    let seed = 12345;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const zones = [
      'America/Chicago',
      'America/New_York',
      'Europe/London',
      'Australia/Lord_Howe',
      'Asia/Kolkata',
      'America/Santiago',
      'UTC',
    ];
    for (const zoneName of zones) {
      const zone = resolveZone(zoneName)!;
      const parser = compileDateTimeParser(['M/d/yyyy h:mm a'], zone);
      const days: Date[] = [];
      for (let i = 0; i < 25; i++)
        days.push(
          new Date(Date.UTC(2024 + Math.floor(random() * 4), Math.floor(random() * 12), 1 + Math.floor(random() * 28))),
        );
      // Transition days of each year: every day whose offset differs from the day before.
      for (let year = 2025; year <= 2026; year++) {
        let previous = DateTime.fromObject({ year, month: 1, day: 1 }, { zone: zoneName }).offset;
        for (
          let day = DateTime.fromObject({ year, month: 1, day: 2 }, { zone: 'UTC' });
          day.year === year;
          day = day.plus({ days: 1 })
        ) {
          const offset = DateTime.fromObject(
            { year: day.year, month: day.month, day: day.day, hour: 12 },
            { zone: zoneName },
          ).offset;
          if (offset !== previous)
            days.push(
              new Date(Date.UTC(day.year, day.month - 1, day.day)),
              new Date(Date.UTC(day.year, day.month - 1, day.day - 1)),
            );
          previous = offset;
        }
      }
      for (const day of days) {
        // Transitions happen in the small hours (midnight in some zones): check those densely.
        const minutes = [0, 15, 30, 45, 60, 75, 90, 105, 120, 135, 150, 165, 180, 210];
        for (let minute = 240; minute < 24 * 60; minute += 60 + Math.floor(random() * 60)) minutes.push(minute);
        for (const minute of minutes) {
          const h = Math.floor(minute / 60);
          const m = minute % 60;
          const text = `${day.getUTCMonth() + 1}/${day.getUTCDate()}/${day.getUTCFullYear()} ${h % 12 === 0 ? 12 : h % 12}:${String(m).padStart(2, '0')} ${h < 12 ? 'AM' : 'PM'}`;
          const ours = parser(text);
          expect(ours, `${zoneName} ${text}`).toEqual({
            ok: true,
            value: reference(zoneName, day.getUTCFullYear(), day.getUTCMonth() + 1, day.getUTCDate(), h, m),
          });
          // The wall-clock reading is luxon's own.
          const luxon = DateTime.fromFormat(text, 'M/d/yyyy h:mm a', { zone: 'UTC' });
          expect(luxon.isValid).toBe(true);
        }
      }
    }
  });

  it('reads the same fields as luxon for every token it compiles, including lenient inputs', () => {
    const cases: [string, string][] = [
      ['M/d/yyyy h:mm a', '1/2/2026 13:05 PM'],
      ['M/d/yyyy h:mm a', '12/31/2026 12:00 am'],
      ['MM/dd/yyyy HH:mm:ss', '01/02/2026 23:59:59'],
      ['yyyy-MM-dd', '2026-1-2'],
      ['M/d/yyyy H:mm', '1/2/2026 24:00'],
      ['d.M.yyyy', '31.12.2026'],
    ];
    for (const [format, text] of cases) {
      const luxon = DateTime.fromFormat(text, format, { zone: 'UTC' });
      const ours = compileDateTimeParser([format], resolveZone('UTC')!)(text);
      if (luxon.isValid)
        expect(ours, `${format} ${text}`).toEqual({
          ok: true,
          value: luxon.toISO({ suppressMilliseconds: true })!.replace('.000', ''),
        });
      else expect(ours.ok, `${format} ${text}`).toBe(false);
    }
  });
});

describe('the character scanner agrees with luxon', () => {
  it('on near-misses of common formats (UTC, so only the reading is compared)', () => {
    let seed = 777;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const cases: [string, string][] = [
      ['M/d/yyyy h:mm a', '11/20/2026 6:05 PM'],
      ['MM/dd/yyyy h:mm a', '02/29/2024 12:00 am'],
      ['M/d/yyyy H:mm:ss', '1/2/2026 23:59:59'],
      ['yyyy-MM-dd HH:mm', '2026-03-08 02:30'],
      ['d.M.yyyy', '31.12.2026'],
      ['M/d/yyyy', '2/29/2023'],
      ['M/d/yyyy h:mma', '7/4/2026 9:15AM'],
    ];
    const alphabet = '0123456789/ :.-APMapm';
    let valid = 0;
    for (let n = 0; n < 6000; n++) {
      const [format, base] = cases[n % cases.length]!;
      let text = base;
      const edits = Math.floor(random() * 3);
      for (let e = 0; e < edits; e++) {
        const at = Math.floor(random() * (text.length + 1));
        const c = alphabet[Math.floor(random() * alphabet.length)]!;
        const roll = random();
        text =
          roll < 0.5
            ? text.slice(0, at) + c + text.slice(at + 1)
            : roll < 0.75
              ? text.slice(0, at) + c + text.slice(at)
              : text.slice(0, at) + text.slice(at + 1);
      }
      const luxon = DateTime.fromFormat(text, format, { zone: 'UTC' });
      const ours = compileDateTimeParser([format], resolveZone('UTC')!)(text);
      if (luxon.isValid && (luxon.year < 1000 || luxon.year > 9999)) {
        // By design: the API's timestamps have four-digit years.
        expect(ours, `${format} ${text}`).toEqual({ ok: false, reason: `"${text}" is outside the years 1000–9999` });
      } else if (luxon.isValid) {
        valid++;
        expect(ours, `${format} ${text}`).toEqual({
          ok: true,
          value: luxon.toISO({ suppressMilliseconds: true })!.replace('.000', ''),
        });
      } else {
        expect(ours.ok, `${format} ${text}`).toBe(false);
      }
    }
    expect(valid).toBeGreaterThan(1000);
  });
});

describe('ZoneConverter', () => {
  it('is right for every minute of the transition days in Chicago and New York, in any order', () => {
    const days: [number, number, number][] = [
      [2026, 3, 8],
      [2026, 11, 1],
    ];
    for (const zoneName of ['America/Chicago', 'America/New_York']) {
      // Fresh converters, so the per-hour cache is filled by whichever minute comes first.
      const forwards = new ZoneConverter(resolveZone(zoneName)!);
      const backwards = new ZoneConverter(resolveZone(zoneName)!);
      for (const [y, mo, d] of days) {
        // Every minute of the small hours (transitions happen at 2 AM), then a sample of the day.
        const minutes = Array.from({ length: 4 * 60 }, (_, i) => i);
        for (let m = 4 * 60; m < 24 * 60; m += 17) minutes.push(m);
        const expected = new Map(minutes.map((m) => [m, reference(zoneName, y, mo, d, Math.floor(m / 60), m % 60)]));
        for (const [converter, order] of [
          [forwards, minutes],
          [backwards, [...minutes].reverse()],
        ] as const) {
          for (const minute of order) {
            const h = Math.floor(minute / 60);
            const mi = minute % 60;
            const got = new Date(converter.toInstant(Date.UTC(y, mo - 1, d, h, mi))).toISOString().slice(0, 19) + 'Z';
            expect(got, `${zoneName} ${y}-${mo}-${d} ${h}:${mi}`).toBe(expected.get(minute));
          }
        }
      }
    }
  });

  it('caches offsets per day without changing results', () => {
    const converter = new ZoneConverter(chicago);
    const local = Date.UTC(2026, 6, 4, 12, 0);
    expect(converter.toInstant(local)).toBe(Date.UTC(2026, 6, 4, 17, 0));
    expect(converter.toInstant(local + 60_000)).toBe(Date.UTC(2026, 6, 4, 17, 1));
  });
});
