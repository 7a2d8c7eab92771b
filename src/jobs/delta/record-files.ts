import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fchmodSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { join } from 'node:path';
import { writeFileSafely } from '../../io/safe-file.js';

/**
 * Where the records of what was sent live, and their files: one SQLite file per profile, base URL
 * and client in the state folder, one HMAC key per profile in the config folder; how a record's
 * file is made (0600, never through a link) and opened, and how a corrupt one is set aside. What a
 * record holds, and how it is read and written, is record.ts.
 */

export const KEY_BYTES = 32;

export interface RecordTarget {
  profile: string;
  baseUrl: string;
  clientId?: string;
}

const short = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

/** A profile's records share a file-name prefix, so that `state forget` finds them all. */
export function profilePrefix(profile: string): string {
  return short(`profile\n${profile}`);
}

export function recordsDir(stateDir: string): string {
  return join(stateDir, 'records');
}

export function recordPath(stateDir: string, target: RecordTarget): string {
  const which = short(`${target.profile}\n${target.baseUrl.replace(/\/+$/, '')}\n${target.clientId ?? ''}`);
  return join(recordsDir(stateDir), `${profilePrefix(target.profile)}-${which}.sqlite`);
}

export function keyPath(configDir: string, profile: string): string {
  return join(configDir, 'record-keys', `${profilePrefix(profile)}.key`);
}

/** The profile's HMAC key, made on first use (32 random bytes, file 0600 in a 0700 folder). */
export function profileKey(configDir: string, profile: string, create: boolean): Buffer | undefined {
  const path = keyPath(configDir, profile);
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
    if (key.length === KEY_BYTES) return key;
  }
  if (!create) return undefined;
  mkdirSync(join(configDir, 'record-keys'), { recursive: true, mode: 0o700 });
  const key = randomBytes(KEY_BYTES);
  writeFileSafely(path, key.toString('hex') + '\n', { what: 'the record key' });
  return key;
}

export interface ForgetResult {
  records: string[];
  key: string | null;
}

/** Deletes every record of a profile (all its base URLs and clients) and its key. */
export function forgetProfile(stateDir: string, configDir: string, profile: string): ForgetResult {
  const dir = recordsDir(stateDir);
  const prefix = `${profilePrefix(profile)}-`;
  const records: string[] = [];
  if (existsSync(dir)) {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix)) continue;
      rmSync(join(dir, name), { force: true });
      if (name.endsWith('.sqlite')) records.push(join(dir, name));
    }
  }
  const key = keyPath(configDir, profile);
  const hadKey = existsSync(key);
  rmSync(key, { force: true });
  return { records, key: hadKey ? key : null };
}

export function createSchema(db: Database.Database): Database.Database {
  db.exec(`
    CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS customers (id BLOB PRIMARY KEY, payload BLOB NOT NULL, sent_at INTEGER NOT NULL, run TEXT NOT NULL, raw BLOB) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS lists (list_id INTEGER PRIMARY KEY, type TEXT NOT NULL, count INTEGER NOT NULL, uploaded_at INTEGER NOT NULL);
    CREATE TABLE IF NOT EXISTS list_values (list_id INTEGER NOT NULL, value BLOB NOT NULL, PRIMARY KEY (list_id, value)) WITHOUT ROWID;
  `);
  // A record made before raw digests were kept gains the column, empty: its customers take the full path until sent again.
  const columns = db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all('customers') as string[];
  if (!columns.includes('raw')) db.exec('ALTER TABLE customers ADD COLUMN raw BLOB');
  // The first look finds a customer by the digest of its lines, which name it: no digest of its id to make.
  db.exec('CREATE INDEX IF NOT EXISTS customers_raw ON customers (substr(raw, 1, 16))');
  return db;
}

/** SQLite's words for a file that is not (or no longer) a sound database. */
export function isCorruption(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return (
    typeof code === 'string' &&
    (code === 'SQLITE_NOTADB' || code.startsWith('SQLITE_CORRUPT') || code === 'SQLITE_IOERR_SHORT_READ')
  );
}

/** `2025-01-31T02:00:00.123Z` → `20250131T020000Z`, for file names. */
function stamp(now: Date): string {
  return now
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}

/**
 * Moves a corrupt record (and SQLite's journal beside it, which would otherwise be "rolled back"
 * into the fresh file) to `NAME.corrupt-<time>`; returns that name.
 */
export function setAsideCorrupt(path: string, now: Date = new Date()): string {
  let aside = `${path}.corrupt-${stamp(now)}`;
  for (let n = 2; existsSync(aside); n++) aside = `${path}.corrupt-${stamp(now)}-${n}`;
  renameSync(path, aside);
  for (const suffix of ['-journal', '-wal', '-shm'])
    if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
  return aside;
}

/** Creates the record's file 0600 before SQLite opens it (SQLite gives its journal the same mode), never through a link. */
export function prepareFile(path: string): void {
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  try {
    fchmodSync(fd, 0o600);
  } finally {
    closeSync(fd);
  }
}

export function openDatabase(path: string): Database.Database {
  const db = new Database(path);
  try {
    db.pragma('journal_mode = DELETE');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    // A --changed-only run looks every customer up, in no order (ids are digests): with SQLite's
    // 2 MB default most lookups read a page again. 32 MB holds the record of ~250,000 customers.
    db.pragma('cache_size = -32768');
    // Read through a memory map: the first look reads the whole record at once (a query over every
    // customer), 0.1 s less than page by page for 100,000 customers. The file only grows in place.
    db.pragma('mmap_size = 268435456');
    return createSchema(db);
  } catch (err) {
    db.close();
    throw err;
  }
}
