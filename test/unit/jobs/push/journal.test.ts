import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Journal, JOURNAL_KEEP_DAYS, journalKey } from '../../../../src/jobs/push/journal.js';
import { UsageError } from '../../../../src/errors.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-journal-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const now = new Date('2026-11-20T08:09:10.123Z');
let n = 0;
/** A fresh state folder (not created yet: the journal makes it). */
const fresh = () => join(work, `s${n++}`, 'state');

const header = (key: string, settings: { maxCustomers?: number; maxBytes?: number; delta?: string } = {}) => ({
  key,
  profile: 'default',
  base_url: 'http://127.0.0.1:1',
  inputs: ['auto:x.csv'],
  settings: { maxCustomers: 1000, maxBytes: 8, ...settings },
});

const ack = (chunk: number, extra: Record<string, unknown> = {}) => ({
  chunk,
  first: `A${chunk}`,
  last: `B${chunk}`,
  customers: 2,
  skipped: [],
  at: now.toISOString(),
  ...extra,
});

const lines = (path: string) =>
  readFileSync(path, 'utf8')
    .split('\n')
    .slice(0, -1)
    .map((l) => JSON.parse(l));

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('nothing thrown');
}

describe('a fresh journal', () => {
  it('creates the state folder (private), and holds just its header line', () => {
    const dir = fresh();
    const { journal, resumed } = Journal.open(dir, header('f1'), false, now);
    expect(resumed).toBe(false);
    expect(journal.path).toBe(join(dir, 'journals', 'f1.ndjson'));
    expect(statSync(join(dir, 'journals')).mode & 0o777).toBe(0o700);
    expect(lines(journal.path)).toEqual([
      {
        type: 'header',
        version: 1,
        created: '2026-11-20T08:09:10.123Z',
        key: 'f1',
        profile: 'default',
        base_url: 'http://127.0.0.1:1',
        inputs: ['auto:x.csv'],
        settings: { maxCustomers: 1000, maxBytes: 8 },
      },
    ]);
    expect(journal.header.created).toBe('2026-11-20T08:09:10.123Z');
    expect(journal.acknowledged).toBe(0);
    expect(journal.complete).toBe(false);
    journal.close();
  });

  it('appends acknowledgements, refusals and the end as lines; a refusal is no acknowledgement', () => {
    const dir = fresh();
    const { journal } = Journal.open(dir, header('f2'), false, now);
    journal.record(ack(0, { unconfirmed: [1] }));
    journal.refused({ chunk: 1, status: 400, reason: 'bad request', at: now.toISOString() });
    expect(journal.acknowledged).toBe(1);
    expect(journal.ack(0)?.unconfirmed).toEqual([1]);
    expect(journal.complete).toBe(false);
    journal.markComplete(new Date('2026-11-20T09:00:00Z'));
    expect(journal.complete).toBe(true);
    journal.close();
    expect(lines(journal.path).slice(1)).toEqual([
      { type: 'ack', ...ack(0, { unconfirmed: [1] }) },
      { type: 'refused', chunk: 1, status: 400, reason: 'bad request', at: now.toISOString() },
      { type: 'complete', at: '2026-11-20T09:00:00.000Z' },
    ]);
    const { journal: again, resumed } = Journal.open(dir, header('f2'), true, now);
    expect(resumed).toBe(true);
    expect(again.acknowledged).toBe(1);
    expect(again.ack(1)).toBeUndefined();
    expect(again.complete).toBe(true);
    again.close();
  });

  it('after close, keeps acknowledgements in memory only, and closing twice is harmless', () => {
    const dir = fresh();
    const { journal } = Journal.open(dir, header('f3'), false, now);
    journal.close();
    const before = readFileSync(journal.path, 'utf8');
    journal.record(ack(0));
    journal.markComplete(now);
    expect(journal.ack(0)?.first).toBe('A0');
    expect(readFileSync(journal.path, 'utf8')).toBe(before);
    expect(() => journal.close()).not.toThrow();
  });

  it('--resume without a journal starts a fresh one', () => {
    const dir = fresh();
    const { journal, resumed } = Journal.open(dir, header('f4'), true, now);
    expect(resumed).toBe(false);
    expect(lines(journal.path)).toHaveLength(1);
    journal.close();
  });

  it('without --resume, replaces an earlier journal of the same inputs, setting nothing aside', () => {
    const dir = fresh();
    const first = Journal.open(dir, header('f5'), false, now).journal;
    first.record(ack(0));
    first.close();
    const { journal } = Journal.open(dir, header('f5'), false, now);
    expect(journal.acknowledged).toBe(0);
    expect(lines(journal.path)).toHaveLength(1);
    expect(readdirSync(join(dir, 'journals'))).toEqual(['f5.ndjson']);
    journal.close();
  });
});

describe('resuming', () => {
  function interrupted(dir: string, key: string, settings: Parameters<typeof header>[1] = {}, complete = false) {
    const { journal } = Journal.open(dir, header(key, settings), false, now);
    journal.record(ack(0));
    if (complete) journal.markComplete(now);
    journal.close();
    return journal.path;
  }

  it('a journal ending in a full line gets no blank line before the next acknowledgement', () => {
    const dir = fresh();
    const path = interrupted(dir, 'r1');
    const { journal } = Journal.open(dir, header('r1'), true, now);
    journal.record(ack(1));
    journal.close();
    const text = readFileSync(path, 'utf8');
    expect(text.split('\n')).toHaveLength(4);
    expect(text).not.toContain('\n\n');
  });

  it('needs the same chunk size and the same byte limit, each on its own', () => {
    const dir = fresh();
    interrupted(dir, 'r2');
    const size = thrown(() => Journal.open(dir, header('r2', { maxCustomers: 500 }), true, now));
    expect(size).toBeInstanceOf(UsageError);
    expect(size.message).toBe(
      'the interrupted push was cut with --chunk-size 1000 --max-bytes 8; resume with the same values (this run asked for 500 and 8)',
    );
    const bytes = thrown(() => Journal.open(dir, header('r2', { maxBytes: 9 }), true, now));
    expect(bytes).toBeInstanceOf(UsageError);
    expect(bytes.message).toContain('(this run asked for 1000 and 9)');
  });

  it('resumes only with the same --changed-only or --full as the interrupted run; asked otherwise, starts afresh and says why', () => {
    const dir = fresh();
    interrupted(dir, 'r3');
    const notes: string[] = [];
    const other = Journal.open(dir, header('r3', { delta: 'full' }), true, now, (line) => notes.push(line));
    expect(other.resumed).toBe(false);
    // Said once, by this note: the run does not also say "nothing to resume".
    expect(other.restarted).toBe(true);
    expect(other.journal.acknowledged).toBe(0);
    other.journal.close();
    expect(notes).toEqual([
      'Note: the interrupted push of these inputs ran without --changed-only or --full and this one with --full: it starts afresh, as asked, rather than resuming that one',
    ]);
    const dir2 = fresh();
    interrupted(dir2, 'r4', { delta: 'changed-only' });
    // The same delta resumes.
    const { journal, resumed } = Journal.open(dir2, header('r4', { delta: 'changed-only' }), true, now);
    expect(resumed).toBe(true);
    expect(journal.acknowledged).toBe(1);
    journal.close();
  });

  it('a completed push run the other way starts afresh; run the same way it is resumed as complete', () => {
    const dir = fresh();
    const path = interrupted(dir, 'r5', { delta: 'changed-only' }, true);
    const same = Journal.open(dir, header('r5', { delta: 'changed-only' }), true, now);
    expect(same.resumed).toBe(true);
    expect(same.journal.complete).toBe(true);
    same.journal.close();
    const other = Journal.open(dir, header('r5', { delta: 'full' }), true, now);
    expect(other.resumed).toBe(false);
    expect(other.journal.acknowledged).toBe(0);
    expect(other.journal.complete).toBe(false);
    expect(lines(path)).toHaveLength(1);
    expect(other.journal.header.settings.delta).toBe('full');
    other.journal.close();
  });
});

describe('a journal that is not what it should be', () => {
  const aside = (dir: string, key: string) => join(dir, 'journals', `${key}.ndjson.corrupt-20261120T080910Z`);

  function openWarned(dir: string, key: string) {
    const warnings: string[] = [];
    const result = Journal.open(dir, header(key), true, now, (l) => warnings.push(l));
    result.journal.close();
    return { ...result, warnings };
  }

  it('with no valid header: set aside with a warning naming both files, and everything is sent', () => {
    const dir = fresh();
    mkdirSync(join(dir, 'journals'), { recursive: true });
    const path = join(dir, 'journals', 'c1.ndjson');
    writeFileSync(path, 'not json at all\n');
    const { journal, resumed, warnings } = openWarned(dir, 'c1');
    expect(resumed).toBe(false);
    expect(journal.acknowledged).toBe(0);
    expect(readFileSync(aside(dir, 'c1'), 'utf8')).toBe('not json at all\n');
    expect(warnings).toEqual([
      `Warning: the journal ${path} is corrupt or was edited (no valid header for these inputs); it was set aside as ${aside(dir, 'c1')}`,
    ]);
    expect(lines(path)).toHaveLength(1);
  });

  it('whose header names other inputs: set aside', () => {
    const dir = fresh();
    const { journal } = Journal.open(dir, header('c2'), false, now);
    journal.record(ack(0));
    journal.close();
    const text = readFileSync(journal.path, 'utf8').replace('"key":"c2"', '"key":"other"');
    writeFileSync(journal.path, text);
    const again = openWarned(dir, 'c2');
    expect(again.resumed).toBe(false);
    expect(again.journal.acknowledged).toBe(0);
    expect(again.warnings).toHaveLength(1);
    expect(readFileSync(aside(dir, 'c2'), 'utf8')).toBe(text);
  });

  it('a link in place of the journal: set aside, never followed', () => {
    const dir = fresh();
    const real = Journal.open(join(work, 'elsewhere'), header('c3'), false, now).journal;
    real.record(ack(0));
    real.close();
    const target = readFileSync(real.path, 'utf8');
    mkdirSync(join(dir, 'journals'), { recursive: true });
    symlinkSync(real.path, join(dir, 'journals', 'c3.ndjson'));
    const again = openWarned(dir, 'c3');
    expect(again.resumed).toBe(false);
    expect(again.journal.acknowledged).toBe(0);
    expect(again.warnings).toHaveLength(1);
    expect(readFileSync(real.path, 'utf8')).toBe(target);
  });

  it.each([
    ['a key that is not text', { key: 1 }],
    ['no creation time', { created: undefined }],
    ['no settings', { settings: null }],
    ['settings that are not an object', { settings: 'x' }],
    ['a chunk size that is not a number', { settings: { maxCustomers: '1000', maxBytes: 8 } }],
    ['no byte limit', { settings: { maxCustomers: 1000 } }],
  ])('a header with %s counts as no header', (_, change) => {
    const dir = fresh();
    const { journal } = Journal.open(dir, header('h'), false, now);
    journal.record(ack(0));
    journal.close();
    const [head, ...rest] = readFileSync(journal.path, 'utf8').split('\n');
    writeFileSync(journal.path, [JSON.stringify({ ...JSON.parse(head!), ...change }), ...rest].join('\n'));
    const again = openWarned(dir, 'h');
    expect(again.warnings).toHaveLength(1);
    expect(again.resumed).toBe(false);
  });

  it('an acknowledgement before any header is ignored', () => {
    const dir = fresh();
    const { journal } = Journal.open(dir, header('b1'), false, now);
    journal.close();
    const text = readFileSync(journal.path, 'utf8');
    writeFileSync(journal.path, `${JSON.stringify({ type: 'ack', ...ack(0) })}\n${text}`);
    const again = Journal.open(dir, header('b1'), true, now);
    expect(again.resumed).toBe(true);
    expect(again.journal.acknowledged).toBe(0);
    again.journal.close();
  });

  it('edited lines that parse but are no entry of the right shape count as torn', () => {
    const dir = fresh();
    const { journal } = Journal.open(dir, header('e1'), false, now);
    journal.record(ack(0));
    journal.close();
    const bad = [
      null,
      7,
      'text',
      { type: 'ack', ...ack(1, { chunk: -1 }) },
      { type: 'ack', ...ack(2), chunk: 2.5 },
      { type: 'ack', ...ack(3, { first: 3 }) },
      { type: 'ack', ...ack(4, { last: null }) },
      { type: 'ack', ...ack(5, { customers: '2' }) },
      { type: 'ack', ...ack(6, { skipped: 'none' }) },
      { type: 'ack', ...ack(7, { skipped: [null] }) },
      { type: 'ack', ...ack(8, { skipped: [{ path: 1, errors: [] }] }) },
      { type: 'ack', ...ack(9, { skipped: [{ path: 'customers.0', errors: 'bad' }] }) },
      { type: 'ack', ...ack(10, { unconfirmed: 'all' }) },
      { type: 'ack', ...ack(11, { unconfirmed: [0.5] }) },
      { type: 'ack', ...ack(14, { unconfirmed: [0, 0.5] }) },
      { type: 'ack', ...ack(12), chunk: '12' },
      { type: 'complete', at: 5 },
      { type: 'something else', chunk: 13 },
    ];
    appendFileSync(journal.path, `${bad.map((b) => JSON.stringify(b)).join('\n')}\n`);
    // Valid shapes, for contrast: kept.
    const good = [
      { type: 'ack', ...ack(20, { skipped: [{ path: 'customers.1', id: null, errors: ['x'] }], unconfirmed: [0, 1] }) },
      { type: 'refused', chunk: 21, status: null, reason: 'r', at: now.toISOString() },
    ];
    appendFileSync(journal.path, `\n   \n${good.map((b) => JSON.stringify(b)).join('\n')}\n`);
    const again = Journal.open(dir, header('e1'), true, now);
    expect(again.resumed).toBe(true);
    expect(again.journal.complete).toBe(false);
    expect([...Array(25).keys()].filter((i) => again.journal.ack(i) !== undefined)).toEqual([0, 20]);
    // Nor do they count as acknowledged under another name (a chunk of -1, 2.5 or "12").
    expect(again.journal.acknowledged).toBe(2);
    again.journal.close();
  });
});

describe('the journals folder', () => {
  it('keeps journals that differ in a trailing slash of the base URL together, and others apart', () => {
    expect(journalKey('d', 'p', 'http://h:1//')).toBe(journalKey('d', 'p', 'http://h:1'));
    expect(journalKey('d', 'p', 'http://h:1/a/')).toBe(journalKey('d', 'p', 'http://h:1/a'));
    expect(journalKey('d', 'p', 'http://h:1/a')).not.toBe(journalKey('d', 'p', 'http://h:1a'));
    expect(journalKey('d', 'p', 'http://h', 'c')).not.toBe(journalKey('d', 'p', 'http://h'));
    // A target without a client id is the target with an empty one.
    expect(journalKey('d', 'p', 'http://h')).toBe(journalKey('d', 'p', 'http://h', ''));
    expect(journalKey('d', 'p', 'http://h')).toMatch(/^[0-9a-f]{64}$/);
  });

  it('prunes every kind of file it leaves behind once old, and nothing else', () => {
    const dir = fresh();
    const folder = join(dir, 'journals');
    mkdirSync(folder, { recursive: true });
    const longAgo = (Date.now() - (JOURNAL_KEEP_DAYS + 1) * 24 * 3600 * 1000) / 1000;
    const aWhileAgo = (Date.now() - (JOURNAL_KEEP_DAYS - 1) * 24 * 3600 * 1000) / 1000;
    const names = {
      old: ['a.ndjson', 'b.ndjson.tmp', 'c.partial', 'd.ndjson.corrupt-20200101T000000Z'],
      kept: ['notes.txt', 'e.json'],
    };
    for (const name of [...names.old, ...names.kept]) {
      writeFileSync(join(folder, name), 'x');
      utimesSync(join(folder, name), longAgo, longAgo);
    }
    writeFileSync(join(folder, 'recent.ndjson'), 'x');
    utimesSync(join(folder, 'recent.ndjson'), aWhileAgo, aWhileAgo);
    Journal.open(dir, header('p1'), false, now).journal.close();
    expect(readdirSync(folder).sort()).toEqual(['e.json', 'notes.txt', 'p1.ndjson', 'recent.ndjson']);
    expect(existsSync(join(folder, 'a.ndjson'))).toBe(false);
  });
});
