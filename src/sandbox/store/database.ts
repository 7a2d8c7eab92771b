import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
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

/** Opens (and creates if needed) the sandbox store; `dataDir` undefined = in memory. */
export function openDatabase(dataDir: string | undefined): Db {
  let db: Db;
  if (dataDir === undefined) {
    db = new Database(':memory:');
  } else {
    // The store holds the client secret, the signing key and applicants' SSNs: for this user only.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = new Database(join(dataDir, DATABASE_FILE));
    db.pragma('journal_mode = WAL');
    // WAL + NORMAL stays consistent after a crash; the last transactions may be lost, which a sandbox can afford.
    db.pragma('synchronous = NORMAL');
  }
  db.pragma('foreign_keys = ON');
  db.exec(SCHEMA);
  return db;
}
