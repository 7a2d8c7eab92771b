import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import {
  fitColumns,
  Output,
  outputWidth,
  wrapText,
  type Column,
  type OutputSettings,
} from '../../../src/output/render.js';
import { formatTime, isIsoInstant, localZone } from '../../../src/output/time.js';

function capture(settings: Partial<OutputSettings> = {}) {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
  return { out: new Output(stream, { format: 'table', color: false, ...settings }), text: () => text };
}

const widest = (text: string) => Math.max(...text.split('\n').map((l) => [...l].length));

interface List {
  id: number;
  name: string;
  type: string;
  created_at: string;
}
const lists: List[] = [
  {
    id: 1,
    name: 'Closed ZIP codes of the northern region, reviewed quarterly by the compliance team',
    type: 'ZIP Codes',
    created_at: '2026-01-15T09:30:00Z',
  },
  { id: 2, name: 'Do not lend', type: 'Social Security Numbers', created_at: '2026-07-01T23:05:09.123Z' },
];
const columns: Column<List>[] = [
  { key: 'id', align: 'right' },
  { key: 'name' },
  { key: 'type' },
  { key: 'created_at', header: 'created' },
];

describe('tables that fit', () => {
  it('fits 80 columns by default (a pipe, a 0-column terminal), wrapping the widest cells, losing no word', async () => {
    const c = capture();
    await c.out.list(lists, columns);
    expect(widest(c.text())).toBeLessThanOrEqual(80);
    for (const word of ['northern', 'compliance', 'team', 'Social', 'Numbers']) expect(c.text()).toContain(word);
  });

  it('fits the width it is given, and leaves a table that fits alone', async () => {
    const narrow = capture({ width: 50 });
    await narrow.out.list(lists, columns);
    expect(widest(narrow.text())).toBeLessThanOrEqual(50);
    const wide = capture({ width: 300 });
    await wide.out.list(lists, columns);
    expect(wide.text()).toContain('Closed ZIP codes of the northern region, reviewed quarterly by the compliance team');
    expect(wide.text().split('\n')).toHaveLength(7);
  });

  it('narrows the widest columns first, never below 8 characters', () => {
    expect(fitColumns([5, 10, 12], 80)).toBeUndefined();
    expect(fitColumns([5, 100, 12], 40)).toEqual([5, 19, 12]);
    const tight = fitColumns([30, 30, 30, 30], 20)!;
    expect(tight.every((w) => w === 10)).toBe(true);
  });

  it('keeps names whole while the text columns can wrap instead, and never cuts a value off', async () => {
    expect(fitColumns([30, 60, 23], 80, [28, 10, 21])).toEqual([30, 23, 23]);
    const c = capture({ width: 40 });
    await c.out.list(
      [{ column: 'bank_account_number_of_the_primary_account', name: 'Bank Account Number' }],
      [{ key: 'column' }, { key: 'name' }],
    );
    expect(widest(c.text())).toBeLessThanOrEqual(40);
    expect(c.text()).not.toContain('…');
    expect(c.text().replace(/[│\s]/g, '')).toContain('bank_account_number_of_the_primary_account'.slice(0, 20));
  });

  it("the width: COLUMNS, else a terminal's own, else 80", () => {
    const tty = Object.assign(new PassThrough(), { isTTY: true, columns: 132 });
    expect(outputWidth(tty, {})).toBe(132);
    expect(outputWidth(tty, { COLUMNS: '100' })).toBe(100);
    expect(outputWidth(Object.assign(new PassThrough(), { isTTY: true, columns: 0 }), {})).toBe(80);
    expect(outputWidth(new PassThrough(), {})).toBe(80);
  });

  it('one record: long values wrap under themselves', async () => {
    const c = capture({ width: 60 });
    await c.out.record(
      {
        user_agent: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/124.0',
        id: 7,
      },
      [{ key: 'user_agent' }, { key: 'id' }],
    );
    const lines = c.text().trimEnd().split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(60);
    expect(lines[1]).toMatch(/^ {12}\S/);
    expect(lines.at(-1)).toBe('id:         7');
    expect(wrapText('abc def', 3)).toEqual(['abc', 'def']);
    // At a space whenever one fits, however early: no word is cut that a line could hold.
    expect(wrapText('Social Security Numbers', 13)).toEqual(['Social', 'Security', 'Numbers']);
    expect(wrapText('Primary Bank Account', 8)).toEqual(['Primary', 'Bank', 'Account']);
    expect(wrapText('a verylongword', 5)).toEqual(['a', 'veryl', 'ongwo', 'rd']);
  });

  it("neutral headers: no red (cli-table3's default) with colour on", async () => {
    const c = capture({ color: true });
    await c.out.list(lists, columns);
    expect(c.text()).not.toContain('\u001b[31m');
  });
});

describe('times for people', () => {
  it("local time with its offset by default, UTC with --utc; JSON keeps the service's value", async () => {
    const local = capture({ width: 200, time: { zone: 'America/Chicago' } });
    await local.out.list(lists, columns);
    expect(local.text()).toContain('2026-01-15 03:30:00 -06:00');
    expect(local.text()).toContain('2026-07-01 18:05:09 -05:00');
    const utc = capture({ width: 200, time: { utc: true, zone: 'America/Chicago' } });
    await utc.out.list(lists, columns);
    expect(utc.text()).toContain('2026-01-15 09:30:00 UTC');
    const json = capture({ format: 'json', time: { zone: 'America/Chicago' } });
    await json.out.list(lists, columns);
    expect(JSON.parse(json.text())[0].created_at).toBe('2026-01-15T09:30:00Z');
  });

  it('recognises instants with a zone only, and reads the zone from TZ', () => {
    expect(isIsoInstant('2026-01-15T09:30:00Z')).toBe(true);
    expect(isIsoInstant('2026-01-15T09:30:00+05:30')).toBe(true);
    expect(isIsoInstant('2026-01-15 09:30:00')).toBe(false);
    expect(isIsoInstant('2026-01-15')).toBe(false);
    expect(formatTime('2026-01-15T09:30:00Z', { zone: 'Asia/Kolkata' })).toBe('2026-01-15 15:00:00 +05:30');
    expect(formatTime('2026-01-15T09:30:00Z', { zone: 'UTC' })).toBe('2026-01-15 09:30:00 +00:00');
    expect(localZone({ TZ: ':Europe/Paris' })).toBe('Europe/Paris');
    expect(localZone({})).toBeUndefined();
  });
});

describe('drawing a table', () => {
  it('boxes the header, no rule between rows, aligned cells, wrapped lines one under the other', async () => {
    const c = capture({ width: 30, color: true });
    await c.out.list(
      [
        { n: 7, word: 'left', text: 'a long value that wraps' },
        { n: 1234, word: 'x', text: '' },
      ],
      [
        { key: 'n', align: 'right' },
        { key: 'word', align: 'center' },
        { key: 'text', header: 'text here' },
      ],
    );
    expect(c.text()).toBe(
      [
        '┌──────┬──────┬──────────────┐',
        '│\u001b[1m    n \u001b[22m│\u001b[1m word \u001b[22m│\u001b[1m text here    \u001b[22m│',
        '├──────┼──────┼──────────────┤',
        '│    7 │ left │ a long value │',
        '│      │      │ that wraps   │',
        '│ 1234 │  x   │              │',
        '└──────┴──────┴──────────────┘',
        '',
      ].join('\n'),
    );
  });

  it('draws a header alone for no rows, and a cell of megabytes in time linear in it', async () => {
    const empty = capture();
    await empty.out.list([], [{ key: 'id' }]);
    expect(empty.text()).toBe('┌────┐\n│ id │\n└────┘\n');
    const big = capture({ width: 80 });
    const started = performance.now();
    await big.out.list([{ id: 1, value: 'q'.repeat(2_000_000) }], [{ key: 'id' }, { key: 'value' }]);
    // Generous: the old drawing took minutes for 4,000 characters and never ended for megabytes.
    expect(performance.now() - started).toBeLessThan(20_000);
    expect(widest(big.text())).toBeLessThanOrEqual(80);
    expect(big.text().replace(/[^q]/g, '')).toHaveLength(2_000_000);
  });

  it('wraps long text in time linear in it, cutting at spaces', () => {
    const words = 'word '.repeat(200_000);
    const started = performance.now();
    const lines = wrapText(words, 23);
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(lines[0]).toBe('word word word word');
    expect(lines.join(' ').replace(/\s+/g, ' ').trim()).toBe(words.trim());
    expect(wrapText('😀😀😀😀', 2)).toEqual(['😀😀', '😀😀']);
  });
});
