import Database from 'better-sqlite3';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ExitCode, LeadctlError } from '../../../../src/errors.js';
import { DeltaRecord, isCorruption, recordPath } from '../../../../src/jobs/delta/record.js';

/** A corrupt delta record never stops a push: it is set aside, and a fresh one takes its place. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-delta-corrupt-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const target = { profile: 'nightly', baseUrl: 'http://127.0.0.1:1' };
let serial = 0;

function filled(customers: number) {
  const home = join(work, `home-${serial++}`);
  const state = join(home, 'state');
  const config = join(home, 'config');
  const record = DeltaRecord.open(state, config, target, true)!;
  const digests = Array.from({ length: customers }, (_, i) => ({
    id: record.digest('customer', String(i)),
    payload: record.digest('payload', String(i)),
  }));
  record.settle(digests, [], 1, 'run-1');
  record.close();
  return { state, config, path: recordPath(state, target), records: join(state, 'records') };
}

// Every page from `from` on gets an invalid b-tree page type as well as scattered bad bytes: any
// read of those pages then fails, whatever the (randomly keyed) digests made the layout.
const corrupt = (path: string, from: (length: number) => number) => {
  const bytes = readFileSync(path);
  const start = from(bytes.length);
  for (let i = start; i < bytes.length; i += 97) bytes[i] = 0xab;
  const declared = bytes.readUInt16BE(16);
  const pageSize = declared === 1 ? 65_536 : declared;
  for (let page = Math.ceil(start / pageSize) * pageSize; page < bytes.length; page += pageSize) bytes[page] = 0xab;
  writeFileSync(path, bytes);
};

describe('a corrupt delta record', () => {
  it('found when opened ("file is not a database"): set aside as NAME.corrupt-<time>, a warning names both, a fresh empty record', () => {
    const home = filled(50);
    writeFileSync(home.path, 'this is not SQLite at all '.repeat(20));
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    try {
      expect(record.customerCount).toBe(0);
      const aside = readdirSync(home.records).filter((n) => n.includes('.corrupt-'));
      expect(aside).toHaveLength(1);
      expect(aside[0]).toMatch(/\.sqlite\.corrupt-\d{8}T\d{6}Z$/);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`the delta record ${home.path} is corrupt (file is not a database)`);
      expect(warnings[0]).toContain(`set aside as ${join(home.records, aside[0]!)}`);
      expect(readFileSync(join(home.records, aside[0]!), 'utf8')).toMatch(/^this is not SQLite/);
    } finally {
      record.close();
    }
  });

  it('found at a lookup in the middle of a run ("malformed"): replaced there, the lookup finds nothing (sent), later writes land in the fresh record', () => {
    const home = filled(20_000);
    corrupt(home.path, (length) => Math.floor(length / 2));
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    try {
      let found = 0;
      for (let i = 0; i < 20_000; i++) if (record.customer(record.digest('customer', String(i)))) found++;
      expect(found).toBeLessThan(20_000);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/is corrupt \(database disk image is malformed\); it was set aside as .*\.corrupt-/);
      const fresh = { id: record.digest('customer', 'new'), payload: record.digest('payload', 'new') };
      record.settle([fresh], [], 2, 'run-2');
      expect(record.customerCount).toBe(1);
      expect(record.customer(fresh.id)).toBeDefined();
    } finally {
      record.close();
    }
    expect(readdirSync(home.records).filter((n) => n.includes('.corrupt-'))).toHaveLength(1);
    const reopened = DeltaRecord.open(home.state, home.config, target, true)!;
    expect(reopened.customerCount).toBe(1);
    reopened.close();
  });

  it('a command that only reads the record warns and leaves the file where it is', () => {
    const home = filled(10);
    writeFileSync(home.path, 'garbage '.repeat(100));
    const warnings: string[] = [];
    expect(DeltaRecord.open(home.state, home.config, target, false, (line) => warnings.push(line))).toBeUndefined();
    expect(warnings[0]).toMatch(/is corrupt \(file is not a database\); it is not used/);
    expect(readdirSync(home.records).filter((n) => n.includes('.corrupt-'))).toEqual([]);
  });

  it('a link where the record should be is never opened through: set aside, the file it points to untouched', () => {
    const home = filled(10);
    const victim = join(home.records, '..', 'victim');
    writeFileSync(victim, 'precious\n');
    unlinkSync(home.path);
    symlinkSync(victim, home.path);
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    record.close();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(home.path).isFile()).toBe(true);
    const aside = readdirSync(home.records).filter((n) => n.includes('.corrupt-'));
    expect(aside).toHaveLength(1);
    expect(lstatSync(join(home.records, aside[0]!)).isSymbolicLink()).toBe(true);
    expect(warnings[0]).toContain(`the delta record ${home.path} is corrupt (`);
  });

  it('tells corruption from other SQLite errors', () => {
    expect(isCorruption(Object.assign(new Error('x'), { code: 'SQLITE_CORRUPT' }))).toBe(true);
    expect(isCorruption(Object.assign(new Error('x'), { code: 'SQLITE_NOTADB' }))).toBe(true);
    expect(isCorruption(Object.assign(new Error('x'), { code: 'SQLITE_FULL' }))).toBe(false);
    expect(isCorruption(new Error('x'))).toBe(false);
  });
});

const homeDirs = () => {
  const home = join(work, `home-${serial++}`);
  return { state: join(home, 'state'), config: join(home, 'config') };
};

/** A second connection to the record's file that never waits: a write fails at once while a reader holds the file. */
function otherWriter(path: string): () => boolean {
  const db = new Database(path, { timeout: 0 });
  return () => {
    try {
      db.prepare('INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v').run(
        'probe',
        'x',
      );
      return true;
    } catch (err) {
      if ((err as { code?: string }).code !== 'SQLITE_BUSY') throw err;
      return false;
    }
  };
}

describe('opening a record', () => {
  it('without create: none where nothing was recorded, nor where the key is gone; nothing is made', () => {
    const { state, config } = homeDirs();
    expect(DeltaRecord.open(state, config, target, false)).toBeUndefined();
    expect(existsSync(state)).toBe(false);
    expect(existsSync(config)).toBe(false);
    DeltaRecord.open(state, config, target, true)!.close();
    const reopened = DeltaRecord.open(state, config, target, false);
    expect(reopened?.path).toBe(recordPath(state, target));
    reopened!.close();
    rmSync(join(config, 'record-keys'), { recursive: true });
    expect(DeltaRecord.open(state, config, target, false)).toBeUndefined();
  });

  it('a state folder that cannot be made is a setup problem naming it (exit 2), not a bug', () => {
    const { state, config } = homeDirs();
    mkdirSync(join(state, '..'), { recursive: true });
    writeFileSync(state, 'a file where the state folder should be');
    let failure: unknown;
    try {
      DeltaRecord.open(state, config, target, true);
    } catch (err) {
      failure = err;
    }
    expect(failure).toBeInstanceOf(LeadctlError);
    expect((failure as LeadctlError).exitCode).toBe(ExitCode.USAGE);
    expect((failure as Error).message).toContain(`cannot write the state folder ${state}`);
  });

  it('a record made under a key since deleted holds nothing under the new key (digests would match nothing)', () => {
    const home = filled(5);
    const before = DeltaRecord.open(home.state, home.config, target, true)!;
    expect(before.customerCount).toBe(5);
    before.close();
    rmSync(join(home.config, 'record-keys'), { recursive: true });
    const after = DeltaRecord.open(home.state, home.config, target, true)!;
    try {
      expect(after.customerCount).toBe(0);
      expect(after.describe()).toEqual({ customers: 0, last_sent: null, lists: [] });
    } finally {
      after.close();
    }
    const db = new Database(home.path, { readonly: true });
    const meta = Object.fromEntries(
      (db.prepare('SELECT k, v FROM meta').all() as { k: string; v: string }[]).map((r) => [r.k, r.v]),
    );
    db.close();
    expect(meta).toMatchObject({ version: '1', profile: target.profile, base_url: target.baseUrl });
    expect(meta.key).toMatch(/^[0-9a-f]{16}$/);
  });
});

describe('what a record holds', () => {
  it('digests are 16 bytes, keyed, and tell the kind from the text', () => {
    const { state, config } = homeDirs();
    const record = DeltaRecord.open(state, config, target, true)!;
    try {
      const d = record.digest('customer', '42');
      expect(d).toHaveLength(16);
      expect(record.digest('customer', '42')).toEqual(d);
      expect(record.digest('payload', '42')).not.toEqual(d);
      expect(record.digest('ab', 'c')).not.toEqual(record.digest('a', 'bc'));
      expect(DeltaRecord.empty().digest('customer', '42')).not.toEqual(d);
    } finally {
      record.close();
    }
  });

  it('remembers what was acknowledged (with when and which run), forgets what was refused, and counts', () => {
    const { state, config } = homeDirs();
    const record = DeltaRecord.open(state, config, target, true)!;
    const c = (n: number) => ({ id: record.digest('customer', String(n)), payload: record.digest('payload', `p${n}`) });
    try {
      record.settle([c(1), c(2), c(3)], [], Date.UTC(2025, 0, 2), 'run-a');
      expect(record.customer(c(2).id)).toEqual({ payload: c(2).payload, sentAt: Date.UTC(2025, 0, 2), run: 'run-a' });
      const changed = { id: c(2).id, payload: record.digest('payload', 'new') };
      record.settle([changed], [c(3)], Date.UTC(2025, 0, 3), 'run-b');
      expect(record.customer(c(2).id)).toEqual({
        payload: changed.payload,
        sentAt: Date.UTC(2025, 0, 3),
        run: 'run-b',
      });
      expect(record.customer(c(3).id)).toBeUndefined();
      expect(record.customer(c(1).id)).toMatchObject({ run: 'run-a' });
      record.settle([], [c(1)], Date.UTC(2025, 0, 4), 'run-c');
      expect(record.customer(c(1).id)).toBeUndefined();
      record.settle([], [], Date.UTC(2025, 0, 5), 'run-d');
      expect(record.customerCount).toBe(1);
      expect(record.describe()).toEqual({ customers: 1, last_sent: '2025-01-03T00:00:00.000Z', lists: [] });
    } finally {
      record.close();
    }
    record.close();
  });

  it('lists: the values last uploaded replace the ones before, with type, count and time; described in list order', () => {
    const { state, config } = homeDirs();
    const record = DeltaRecord.open(state, config, target, true)!;
    const v = (s: string) => record.digest('list-value', s);
    try {
      expect(record.list(9)).toBeUndefined();
      const inNine = record.listLookup(9);
      expect(inNine(v('a'))).toBe(false);
      record.rememberList(9, 'Phone Numbers', [v('a'), v('b')], Date.UTC(2025, 1, 1));
      record.rememberList(
        3,
        'Emails',
        (function* () {
          yield v('x');
        })(),
        Date.UTC(2025, 1, 2),
      );
      expect(record.list(9)).toEqual({ type: 'Phone Numbers', count: 2, uploadedAt: Date.UTC(2025, 1, 1) });
      expect(inNine(v('a'))).toBe(true);
      expect(inNine(v('x'))).toBe(false);
      expect(record.listLookup(3)(v('x'))).toBe(true);
      record.rememberList(9, 'SSNs', [v('c')], Date.UTC(2025, 1, 3));
      expect(record.list(9)).toEqual({ type: 'SSNs', count: 1, uploadedAt: Date.UTC(2025, 1, 3) });
      expect(inNine(v('a'))).toBe(false);
      expect(inNine(v('c'))).toBe(true);
      expect(record.describe().lists).toEqual([
        { list_id: 3, type: 'Emails', values: 1, uploaded_at: '2025-02-02T00:00:00.000Z' },
        { list_id: 9, type: 'SSNs', values: 1, uploaded_at: '2025-02-03T00:00:00.000Z' },
      ]);
    } finally {
      record.close();
    }
  });

  it('an empty record (a check-only run with none made) holds nothing and has no file', () => {
    const record = DeltaRecord.empty();
    expect(record.path).toBeNull();
    expect(record.customer(record.digest('customer', '1'))).toBeUndefined();
    expect(record.customerCount).toBe(0);
    expect(record.listLookup(1)(record.digest('list-value', '1'))).toBe(false);
    record.close();
  });
});

describe('lookups and other processes', () => {
  it('lookups hold the file in one read transaction, let go after 4,096 of them or when idle', async () => {
    const { state, config } = homeDirs();
    const record = DeltaRecord.open(state, config, target, true)!;
    const write = otherWriter(record.path!);
    try {
      expect(write()).toBe(true);
      const id = record.digest('customer', '1');
      record.customer(id);
      expect(write()).toBe(false);
      for (let i = 1; i < 4095; i++) record.customer(id);
      expect(write()).toBe(false);
      record.customer(id); // the 4,096th
      expect(write()).toBe(true);
      record.listLookup(1)(id);
      expect(write()).toBe(false);
      await new Promise((r) => setTimeout(r, 300));
      expect(write()).toBe(true);
      // A write of the record's own ends its reads first.
      record.customer(id);
      record.settle([], [], 1, 'nothing to settle');
      expect(write()).toBe(false);
      record.settle([{ id, payload: id }], [], 1, 'r');
      expect(write()).toBe(true);
      record.customer(id);
      record.rememberList(1, 'Emails', [id], 1);
      expect(write()).toBe(true);
      record.customer(id);
      record.close();
      expect(write()).toBe(true);
      // Closed is closed: a lookup now is a bug of the caller, never taken for a corrupt file.
      expect(() => record.customer(id)).toThrow(/not open/);
      expect(readdirSync(join(state, 'records')).filter((n) => n.includes('.corrupt-'))).toEqual([]);
    } finally {
      record.close();
    }
  });
});

describe('opening, the edges', () => {
  it('without create, a record not yet made for this base URL is none, even when the profile has a key', () => {
    const { state, config } = homeDirs();
    DeltaRecord.open(state, config, target, true)!.close();
    const other = { ...target, baseUrl: 'http://127.0.0.1:2' };
    expect(DeltaRecord.open(state, config, other, false)).toBeUndefined();
    expect(existsSync(recordPath(state, other))).toBe(false);
  });

  it('a link to an empty file where the record should be: the file it points to stays empty', () => {
    const { state, config } = homeDirs();
    mkdirSync(join(state, 'records'), { recursive: true });
    const victim = join(state, 'victim');
    writeFileSync(victim, '');
    symlinkSync(victim, recordPath(state, target));
    const record = DeltaRecord.open(state, config, target, true)!;
    record.close();
    expect(readFileSync(victim)).toHaveLength(0);
    expect(lstatSync(recordPath(state, target)).isFile()).toBe(true);
  });

  it('the fresh record that replaces a corrupt one is 0600 and keeps what is written to it across runs', () => {
    const home = filled(10);
    writeFileSync(home.path, 'not SQLite '.repeat(50));
    chmodSync(home.path, 0o644);
    const record = DeltaRecord.open(home.state, home.config, target, true)!;
    expect(statSync(home.path).mode & 0o777).toBe(0o600);
    record.settle([{ id: record.digest('customer', 'x'), payload: record.digest('payload', 'x') }], [], 5, 'r');
    record.close();
    const again = DeltaRecord.open(home.state, home.config, target, true)!;
    expect(again.customerCount).toBe(1);
    again.close();
  });
});

describe('a corrupt record found mid-run by a list', () => {
  it('a membership test made before the record was replaced asks the fresh one: nothing, then what is remembered since', () => {
    const home = filled(20_000);
    const first = DeltaRecord.open(home.state, home.config, target, true)!;
    const v = first.digest('list-value', 'a');
    first.rememberList(4, 'Emails', [v], 1);
    first.close();
    corrupt(home.path, (length) => Math.floor(length / 3));
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    try {
      const inFour = record.listLookup(4);
      for (let i = 0; i < 20_000 && warnings.length === 0; i++) record.customer(record.digest('customer', String(i)));
      expect(warnings).toHaveLength(1);
      expect(inFour(v)).toBe(false);
      // A membership test made on the fresh record, after the replacement.
      const later = record.listLookup(4);
      expect(later(v)).toBe(false);
      record.rememberList(4, 'Emails', [v], 2);
      expect(record.list(4)).toEqual({ type: 'Emails', count: 1, uploadedAt: 2 });
      expect(inFour(v)).toBe(true);
      expect(later(v)).toBe(true);
      expect(statSync(home.path).mode & 0o777).toBe(0o600);
    } finally {
      record.close();
    }
  });

  it('found while a list is remembered: the list is not written to the fresh record (its values were read once)', () => {
    const home = filled(20_000);
    const first = DeltaRecord.open(home.state, home.config, target, true)!;
    first.rememberList(
      4,
      'Emails',
      Array.from({ length: 20_000 }, (_, i) => first.digest('list-value', String(i))),
      1,
    );
    first.close();
    corrupt(home.path, (length) => Math.floor(length / 3));
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    try {
      function* values() {
        yield record.digest('list-value', 'a');
      }
      record.rememberList(4, 'Emails', values(), 2);
      expect(warnings).toHaveLength(1);
      expect(record.list(4)).toBeUndefined();
    } finally {
      record.close();
    }
  });
});
