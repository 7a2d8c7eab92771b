import Database from 'better-sqlite3';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  forgetProfile,
  isCorruption,
  KEY_BYTES,
  keyPath,
  openDatabase,
  prepareFile,
  profileKey,
  profilePrefix,
  recordPath,
  recordsDir,
  setAsideCorrupt,
} from '../../../../src/jobs/delta/record-files.js';

/** Where the records and their keys live, and how a record's file is made, opened and set aside. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-record-files-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;
const fresh = () => {
  const dir = join(work, `case-${serial++}`);
  mkdirSync(dir);
  return dir;
};

describe('the names of records and keys', () => {
  it('one record per profile, base URL (trailing slashes aside) and client, under <state>/records', () => {
    const state = '/state';
    const base = recordPath(state, { profile: 'p', baseUrl: 'https://x.test/api' });
    expect(base.startsWith(`${recordsDir(state)}/`)).toBe(true);
    expect(recordsDir(state)).toBe('/state/records');
    expect(base).toMatch(new RegExp(`^/state/records/${profilePrefix('p')}-[0-9a-f]{16}\\.sqlite$`));
    expect(recordPath(state, { profile: 'p', baseUrl: 'https://x.test/api/' })).toBe(base);
    expect(recordPath(state, { profile: 'p', baseUrl: 'https://x.test/api///' })).toBe(base);
    expect(recordPath(state, { profile: 'p', baseUrl: 'https://x.test/api', clientId: '' })).toBe(base);
    expect(recordPath(state, { profile: 'p', baseUrl: 'https://x.test/ap/i' })).not.toBe(base);
    expect(recordPath(state, { profile: 'p', baseUrl: 'https://x.test/api', clientId: 'c' })).not.toBe(base);
    expect(recordPath(state, { profile: 'q', baseUrl: 'https://x.test/api' })).not.toBe(base);
    // A slash inside the URL is part of it: only the trailing ones are dropped.
    expect(recordPath(state, { profile: 'p', baseUrl: 'https:/x.test/api' })).not.toBe(base);
  });

  it('a profile prefix is 16 hex digits, the same for the same profile only', () => {
    expect(profilePrefix('nightly')).toMatch(/^[0-9a-f]{16}$/);
    expect(profilePrefix('nightly')).toBe(profilePrefix('nightly'));
    expect(profilePrefix('nightly')).not.toBe(profilePrefix('weekly'));
    expect(keyPath('/cfg', 'nightly')).toBe(`/cfg/record-keys/${profilePrefix('nightly')}.key`);
  });
});

describe('the profile key', () => {
  it('made on first use with create (32 random bytes as hex, 0600 in a 0700 folder), read back after', () => {
    const config = fresh();
    expect(profileKey(config, 'p', false)).toBeUndefined();
    expect(existsSync(join(config, 'record-keys'))).toBe(false);
    const key = profileKey(config, 'p', true)!;
    expect(key).toHaveLength(KEY_BYTES);
    expect(readFileSync(keyPath(config, 'p'), 'utf8')).toBe(`${key.toString('hex')}\n`);
    expect(statSync(keyPath(config, 'p')).mode & 0o777).toBe(0o600);
    expect(statSync(join(config, 'record-keys')).mode & 0o777).toBe(0o700);
    expect(profileKey(config, 'p', false)).toEqual(key);
    expect(profileKey(config, 'p', true)).toEqual(key);
    expect(profileKey(config, 'other', true)).not.toEqual(key);
  });

  it('a key file that does not hold 32 bytes is no key: none without create, a new one with it', () => {
    const config = fresh();
    mkdirSync(join(config, 'record-keys'));
    writeFileSync(keyPath(config, 'p'), `${'ab'.repeat(31)}\n`);
    expect(profileKey(config, 'p', false)).toBeUndefined();
    const made = profileKey(config, 'p', true)!;
    expect(made).toHaveLength(KEY_BYTES);
    expect(made.toString('hex')).not.toBe('ab'.repeat(31));
    expect(profileKey(config, 'p', false)).toEqual(made);
  });
});

describe('forgetting a profile', () => {
  it('deletes all its records (and their side files) and its key, and nothing of another profile', () => {
    const state = fresh();
    const config = fresh();
    const dir = recordsDir(state);
    mkdirSync(dir);
    const mine = [
      recordPath(state, { profile: 'p', baseUrl: 'https://a.test' }),
      recordPath(state, { profile: 'p', baseUrl: 'https://b.test', clientId: 'c' }),
    ];
    const theirs = recordPath(state, { profile: 'q', baseUrl: 'https://a.test' });
    for (const path of [...mine, theirs]) writeFileSync(path, '');
    writeFileSync(`${mine[0]}-journal`, '');
    profileKey(config, 'p', true);
    profileKey(config, 'q', true);

    const gone = forgetProfile(state, config, 'p');
    expect(gone.records.sort()).toEqual([...mine].sort());
    expect(gone.key).toBe(keyPath(config, 'p'));
    expect(readdirSync(dir)).toEqual([theirs.slice(dir.length + 1)]);
    expect(existsSync(keyPath(config, 'p'))).toBe(false);
    expect(existsSync(keyPath(config, 'q'))).toBe(true);

    expect(forgetProfile(state, config, 'p')).toEqual({ records: [], key: null });
  });

  it('with no records folder and no key: nothing to delete, said so', () => {
    expect(forgetProfile(join(fresh(), 'none'), fresh(), 'p')).toEqual({ records: [], key: null });
  });
});

describe('corruption', () => {
  it('is SQLite saying the file is not a sound database; any other error is not', () => {
    const coded = (code: unknown) => Object.assign(new Error('x'), { code });
    for (const code of ['SQLITE_NOTADB', 'SQLITE_CORRUPT', 'SQLITE_CORRUPT_VTAB', 'SQLITE_IOERR_SHORT_READ'])
      expect(isCorruption(coded(code)), code).toBe(true);
    for (const code of ['SQLITE_FULL', 'SQLITE_IOERR', 'SQLITE_IOERR_WRITE', 'SQLITE_READONLY', 'EIO', 42, undefined])
      expect(isCorruption(coded(code)), String(code)).toBe(false);
    expect(isCorruption(undefined)).toBe(false);
    expect(isCorruption(null)).toBe(false);
  });

  it('a corrupt file is moved to NAME.corrupt-<UTC time>, with its journals; a second in the same second gets -2', () => {
    const dir = fresh();
    const path = join(dir, 'r.sqlite');
    const now = new Date('2025-01-31T02:03:04.567Z');
    writeFileSync(path, 'first');
    writeFileSync(`${path}-journal`, 'j');
    writeFileSync(`${path}-wal`, 'w');
    writeFileSync(`${path}-shm`, 's');
    const aside = setAsideCorrupt(path, now);
    expect(aside).toBe(`${path}.corrupt-20250131T020304Z`);
    expect(readFileSync(aside, 'utf8')).toBe('first');
    expect(readFileSync(`${aside}-journal`, 'utf8')).toBe('j');
    expect(readFileSync(`${aside}-wal`, 'utf8')).toBe('w');
    expect(readFileSync(`${aside}-shm`, 'utf8')).toBe('s');
    expect(existsSync(path)).toBe(false);

    writeFileSync(path, 'second');
    const again = setAsideCorrupt(path, now);
    expect(again).toBe(`${path}.corrupt-20250131T020304Z-2`);
    expect(readFileSync(again, 'utf8')).toBe('second');
    expect(existsSync(`${again}-journal`)).toBe(false);
    writeFileSync(path, 'third');
    expect(setAsideCorrupt(path, now)).toBe(`${path}.corrupt-20250131T020304Z-3`);
    expect(readdirSync(dir).sort()).toEqual(
      [
        'r.sqlite.corrupt-20250131T020304Z',
        'r.sqlite.corrupt-20250131T020304Z-journal',
        'r.sqlite.corrupt-20250131T020304Z-wal',
        'r.sqlite.corrupt-20250131T020304Z-shm',
        'r.sqlite.corrupt-20250131T020304Z-2',
        'r.sqlite.corrupt-20250131T020304Z-3',
      ].sort(),
    );
  });
});

describe("the record's file", () => {
  it('is made 0600, and an existing file is made 0600 too, its content kept', () => {
    const dir = fresh();
    const path = join(dir, 'r.sqlite');
    prepareFile(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    writeFileSync(path, 'kept');
    chmodSync(path, 0o644);
    prepareFile(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readFileSync(path, 'utf8')).toBe('kept');
  });

  it('is never opened through a link (ELOOP), the file it points to untouched', () => {
    const dir = fresh();
    writeFileSync(join(dir, 'victim'), 'precious');
    chmodSync(join(dir, 'victim'), 0o644);
    symlinkSync(join(dir, 'victim'), join(dir, 'r.sqlite'));
    expect(() => prepareFile(join(dir, 'r.sqlite'))).toThrow(expect.objectContaining({ code: 'ELOOP' }));
    expect(statSync(join(dir, 'victim')).mode & 0o777).toBe(0o644);
  });

  it('is opened with a rollback journal, NORMAL sync and a 5 s busy timeout, its tables made', () => {
    const path = join(fresh(), 'r.sqlite');
    const db = openDatabase(path);
    try {
      expect(db.pragma('journal_mode', { simple: true })).toBe('delete');
      expect(db.pragma('synchronous', { simple: true })).toBe(1);
      expect(db.pragma('busy_timeout', { simple: true })).toBe(5000);
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all();
      expect(tables).toEqual(['customers', 'list_values', 'lists', 'meta']);
    } finally {
      db.close();
    }
    // Opened twice: the tables are there already, nothing fails.
    openDatabase(path).close();
  });

  it('a file that is not a database fails to open as corruption', () => {
    const path = join(fresh(), 'r.sqlite');
    writeFileSync(path, 'not a database '.repeat(100));
    let failure: unknown;
    try {
      openDatabase(path).close();
    } catch (err) {
      failure = err;
    }
    expect(isCorruption(failure)).toBe(true);
    // The failed open left no handle behind: the file can be set aside and a fresh one opened.
    const aside = setAsideCorrupt(path);
    const db = new Database(path);
    db.close();
    expect(readFileSync(aside, 'utf8')).toMatch(/^not a database/);
  });
});
