import { chmodSync, closeSync, constants, mkdirSync, openSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';

export type Db = Database.Database;

export const DATABASE_FILE = 'sandbox.sqlite';

/**
 * Every table of the sandbox. Timestamps are stored as `YYYY-MM-DDTHH:mm:ssZ` strings, which
 * sort and compare correctly as text. `IF NOT EXISTS` lets a persistent store be reopened.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS accounts (id INTEGER PRIMARY KEY, name TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS oauth_clients (
  client_id TEXT PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  client_secret TEXT NOT NULL,
  secret_version INTEGER NOT NULL DEFAULT 1,
  scopes TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS tokens (
  jti TEXT PRIMARY KEY,
  client_id TEXT NOT NULL,
  issued_at TEXT NOT NULL,
  expires_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS campaigns (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL,
  api_key TEXT NOT NULL UNIQUE,
  campaign_code TEXT NOT NULL UNIQUE,
  price REAL NOT NULL,
  price_reject INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS management_systems (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  name TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS customers (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL,
  customer_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (account_id, customer_id)
);
CREATE TABLE IF NOT EXISTS loans (
  id INTEGER PRIMARY KEY,
  customer_ref INTEGER NOT NULL REFERENCES customers(id),
  loan_id TEXT NOT NULL,
  lead_id INTEGER,
  management_system_id INTEGER,
  is_lead_loan INTEGER NOT NULL DEFAULT 0,
  application_type TEXT,
  loan_type TEXT,
  loan_status TEXT,
  loan_amount INTEGER,
  funded_amount INTEGER,
  first_payment_date TEXT,
  applied_at TEXT,
  esigned_at TEXT,
  withdrawn_at TEXT,
  originated_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (customer_ref, loan_id)
);
CREATE TABLE IF NOT EXISTS payments (
  id INTEGER PRIMARY KEY,
  loan_ref INTEGER NOT NULL REFERENCES loans(id),
  payment_id TEXT NOT NULL,
  payment_amount INTEGER,
  payment_type TEXT,
  payment_mode TEXT,
  payment_status TEXT,
  principal INTEGER,
  interest INTEGER,
  fees INTEGER,
  bank_routing_number TEXT,
  bank_account_number TEXT,
  return_code TEXT,
  returned_at TEXT,
  fail_code TEXT,
  failed_at TEXT,
  payment_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (loan_ref, payment_id)
);
CREATE TABLE IF NOT EXISTS lists (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  deleted_at TEXT,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS list_items (
  list_id INTEGER NOT NULL REFERENCES lists(id),
  type TEXT NOT NULL,
  value TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS list_items_by_list ON list_items (list_id);
CREATE INDEX IF NOT EXISTS list_items_by_value ON list_items (type, value);
CREATE TABLE IF NOT EXISTS leads (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL,
  campaign_id INTEGER NOT NULL REFERENCES campaigns(id),
  result TEXT NOT NULL,
  price REAL,
  ssn TEXT,
  email TEXT,
  redirect_token TEXT,
  created_at TEXT NOT NULL,
  decisioned_at TEXT NOT NULL,
  accepted_at TEXT,
  request_json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS leads_by_created ON leads (created_at);
CREATE INDEX IF NOT EXISTS leads_by_ssn ON leads (ssn);
CREATE INDEX IF NOT EXISTS leads_by_email ON leads (email);
CREATE TABLE IF NOT EXISTS price_reject_offers (
  id INTEGER PRIMARY KEY,
  lead_id INTEGER NOT NULL REFERENCES leads(id),
  price REAL NOT NULL,
  status TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS offers_by_lead ON price_reject_offers (lead_id);
`;

/** The store's files: the database and the journal files SQLite keeps beside it. */
const STORE_FILES = [DATABASE_FILE, `${DATABASE_FILE}-wal`, `${DATABASE_FILE}-shm`, `${DATABASE_FILE}-journal`];

/** The store cannot be used as it is (damaged, or a file where its folder should be): never a sandbox bug. */
export class SandboxStoreError extends Error {
  constructor(
    message: string,
    readonly path: string,
    readonly hint: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** SQLite's words for a file that is not, or no longer, a database. */
const CORRUPT_CODES = /^SQLITE_(NOTADB|CORRUPT)/;

/**
 * Opens (and creates if needed) the sandbox store; `dataDir` undefined = in memory. `warn`
 * hears of a folder others can read that the sandbox would not tighten (one with other files).
 * Throws SandboxStoreError for a store that is corrupt or cannot be opened or written.
 */
export function openDatabase(dataDir: string | undefined, warn: (message: string) => void = () => {}): Db {
  if (dataDir === undefined) {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    db.exec(SCHEMA);
    return db;
  }
  const file = join(dataDir, DATABASE_FILE);
  let db: Db | undefined;
  try {
    // The store holds the client secret, the signing key, SSNs and bank details: for this user only.
    keepPrivate(dataDir, warn);
    // SQLite gives its -wal and -shm files the database file's mode; the umask covers any other it creates.
    db = withUmask(0o077, () => {
      const opened = new Database(file);
      opened.pragma('journal_mode = WAL');
      // WAL + NORMAL stays consistent after a crash; the last transactions may be lost, which a sandbox can afford.
      opened.pragma('synchronous = NORMAL');
      opened.pragma('foreign_keys = ON');
      opened.exec(SCHEMA);
      return opened;
    });
    for (const name of STORE_FILES.slice(1)) ownerOnly(join(dataDir, name));
    return db;
  } catch (err) {
    if (db?.open) db.close();
    throw storeError(err, dataDir);
  }
}

/**
 * A store that cannot be used as it is, as a SandboxStoreError naming the file and what to do;
 * any other error (no space, no permission, a read-only disk) is returned as it is, for the
 * caller's account of environment errors.
 */
export function storeError(err: unknown, dataDir: string): unknown {
  if (err instanceof SandboxStoreError) return err;
  const code = (err as { code?: unknown }).code;
  if (typeof code !== 'string') return err;
  const file = resolve(dataDir, DATABASE_FILE);
  if (CORRUPT_CODES.test(code)) {
    return new SandboxStoreError(
      `the sandbox store ${file} is damaged or not a sandbox store (${(err as Error).message})`,
      file,
      `move it aside (mv ${file} ${file}.corrupt) or delete it with its -wal and -shm files, and the sandbox starts a fresh store there; or start with another --data-dir, or --memory`,
      { cause: err },
    );
  }
  if (code === 'ENOTDIR' || code === 'EEXIST') {
    return new SandboxStoreError(
      `the sandbox store's folder ${resolve(dataDir)} cannot be made: a file is in the way (${code})`,
      resolve(dataDir),
      'choose another --data-dir, or --memory',
      { cause: err },
    );
  }
  return err;
}

/**
 * Creates the store's folders for this user alone (0700) and its database file 0600 before SQLite
 * opens it. An existing folder others can read is tightened when it is the sandbox's own (owned by
 * this user, holding nothing but the store); otherwise the sandbox says so instead of changing a
 * folder it did not make (e.g. `--data-dir /tmp`).
 */
function keepPrivate(dataDir: string, warn: (message: string) => void): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const folder = statSync(dataDir);
  if (!folder.isDirectory()) throw Object.assign(new Error(`${dataDir} is not a folder`), { code: 'ENOTDIR' });
  if (process.platform !== 'win32' && (folder.mode & 0o077) !== 0) {
    const ours = typeof process.getuid === 'function' && folder.uid === process.getuid();
    const onlyStore = readdirSync(dataDir).every((name) => STORE_FILES.includes(name));
    if (ours && onlyStore) chmodSync(dataDir, 0o700);
    else
      warn(
        `the sandbox store's folder ${dataDir} can be read by other users (mode ${(folder.mode & 0o777).toString(8)}); its files are kept 0600, but consider a folder of your own (chmod 700)`,
      );
  }
  const file = join(dataDir, DATABASE_FILE);
  try {
    closeSync(openSync(file, constants.O_CREAT | constants.O_EXCL | constants.O_WRONLY, 0o600));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    ownerOnly(file);
  }
}

/** Takes group and other access away from a store file, if there is one and it has any. */
function ownerOnly(file: string): void {
  if (process.platform === 'win32') return;
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return;
  }
  if ((mode & 0o077) !== 0) chmodSync(file, mode & 0o700);
}

/** Runs `fn` with the process umask set to `mask`; a worker thread cannot change it, and runs `fn` as is. */
function withUmask<T>(mask: number, fn: () => T): T {
  let previous: number | undefined;
  try {
    previous = process.umask(mask);
  } catch {
    previous = undefined;
  }
  try {
    return fn();
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}
