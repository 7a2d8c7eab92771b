import Database from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { stateDirError } from '../../config/state-dir.js';
import { environmentError } from '../../errors.js';
import { KeyedDigest, prefixedDigester } from './keyed-digest.js';
import { ENTRY_HEX, RawIndex } from './raw-index.js';
import {
  createSchema,
  isCorruption,
  KEY_BYTES,
  openDatabase,
  prepareFile,
  profileKey,
  type RecordTarget,
  recordPath,
  recordsDir,
  setAsideCorrupt,
} from './record-files.js';

export {
  type ForgetResult,
  forgetProfile,
  isCorruption,
  keyPath,
  profileKey,
  profilePrefix,
  type RecordTarget,
  recordPath,
  recordsDir,
  setAsideCorrupt,
} from './record-files.js';

/**
 * The local record of what the service acknowledged, per profile, base URL and client id: for
 * each customer, a digest of the whole payload last sent (and when, and of the raw rows it was
 * read from, see customers.ts), and for each list, digests
 * of the values last uploaded. It holds no personal data in clear: customer ids, payloads and
 * list values are all HMACs under a random key of the profile's, kept 0600 in the config folder
 * (an SSN has only 10^9 values, so a plain hash would be a copy of it). Deleting the record only
 * makes the next `--changed-only` run send everything.
 *
 * A corrupt record (SQLite: "database disk image is malformed", "file is not a database"), found
 * when it is opened or at any lookup or write later, is set aside as `NAME.corrupt-<time>` with a
 * warning naming both paths, and a fresh record takes its place: the run sends everything from
 * there on, which is always safe. A full or read-only disk is an EnvironmentError naming the record.
 */

const DIGEST_BYTES = 16;

/** What the record keeps of a customer's raw lines: their digest, their counts, the payload digest they gave. */
function rawBlob(raw: NonNullable<CustomerDigest['raw']>, payload: Buffer): Buffer {
  const counts = Buffer.alloc(8);
  counts.writeUInt32BE(Math.min(raw.loans, 0xffffffff), 0);
  counts.writeUInt32BE(Math.min(raw.payments, 0xffffffff), 4);
  return Buffer.concat([Buffer.from(raw.digest, 'hex'), counts, payload]);
}
const SCHEMA_VERSION = '1';
const READS_PER_TRANSACTION = 4096;
const READ_TRANSACTION_MS = 50;

/**
 * A customer as the record knows it: keyed digests of its id, of its payload and (when it was read
 * from raw rows and had nothing refused) of those rows, see customers.ts.
 */
export interface CustomerDigest {
  id: Buffer;
  payload: Buffer;
  /** The raw lines' digest in hex (see rawDigester). */
  raw?: { digest: string; loans: number; payments: number };
}

export interface RememberedCustomer {
  payload: Buffer;
  sentAt: number;
  run: string;
}

type Statements = {
  getCustomer: Database.Statement<[Buffer], { payload: Buffer; sent_at: number; run: string }>;
  knownRaw: Database.Statement<[Buffer, string, number], Buffer>;
  rawIndex: Database.Statement<[string, number], string | null>;
  putCustomer: Database.Statement<[Buffer, Buffer, Buffer | null, number, string]>;
  setRaw: Database.Statement<[Buffer, Buffer, Buffer]>;
  dropCustomer: Database.Statement<[Buffer]>;
  countCustomers: Database.Statement<[], { n: number }>;
};

export class DeltaRecord {
  /** Above this many customers the record's raw digests are not read at once (48 bytes each). */
  static rawIndexMax = 500_000;

  private db: Database.Database;
  private statements: Statements;
  /** Bumped when a corrupt file is replaced mid-run: statements of the old one are prepared again. */
  private generation = 0;

  /** Lookups made in the read transaction now open (0: none open). */
  private reads = 0;
  private readTimer: NodeJS.Timeout | undefined;
  /** HMAC-SHA256 under the profile's key. */
  private readonly keyed: KeyedDigest;
  private rawIndexHeld: { run: string; sentSince: number; generation: number; index: RawIndex | undefined } | undefined;

  private constructor(
    /** The record's file; null for an empty record held in memory. */
    readonly path: string | null,
    key: Buffer,
    db: Database.Database,
    private readonly target: RecordTarget | null,
    private readonly warn: (line: string) => void,
  ) {
    this.keyed = new KeyedDigest(key);
    this.db = db;
    this.statements = DeltaRecord.prepare(db);
  }

  private static prepare(db: Database.Database): Statements {
    return {
      getCustomer: db.prepare('SELECT payload, sent_at, run FROM customers WHERE id = ?'),
      // The raw digest is kept followed by the counts of its lines and the payload digest it was
      // recorded with: one written over since by a version that keeps no raw digests (a new
      // payload) no longer counts, nor does one laid out as older versions did (no counts).
      // One statement per digest: 64 at a time in an IN list was slower (10 µs a customer against 6).
      knownRaw: db
        .prepare(
          'SELECT substr(raw, 17, 8) FROM customers WHERE substr(raw, 1, 16) = ? AND substr(raw, 25) = payload AND run <> ? AND sent_at >= ?',
        )
        .pluck() as Database.Statement<[Buffer, string, number], Buffer>,
      putCustomer: db.prepare(
        'INSERT INTO customers (id, payload, raw, sent_at, run) VALUES (?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET payload = excluded.payload, raw = excluded.raw, sent_at = excluded.sent_at, run = excluded.run',
      ),
      setRaw: db.prepare('UPDATE customers SET raw = ? WHERE id = ? AND payload = ?'),
      rawIndex: db
        .prepare(
          `SELECT group_concat(lower(hex(substr(raw, 1, ${ENTRY_HEX / 2}))), '') FROM customers WHERE length(raw) >= 24 AND substr(raw, 25) = payload AND run <> ? AND sent_at >= ?`,
        )
        .pluck() as Database.Statement<[string, number], string | null>,
      dropCustomer: db.prepare('DELETE FROM customers WHERE id = ?'),
      countCustomers: db.prepare('SELECT count(*) AS n FROM customers'),
    };
  }

  /**
   * Opens (or, with `create`, makes) the record of a target. Without `create`, a missing record
   * (or key) is undefined: nothing was ever recorded there. A corrupt record is set aside with a
   * warning (see above) and a fresh one replaces it; without `create` (a command that only reads it)
   * it is left where it is, with a warning, and there is none.
   */
  static open(
    stateDir: string,
    configDir: string,
    target: RecordTarget,
    create: boolean,
    warn: (line: string) => void = () => {},
  ): DeltaRecord | undefined {
    const path = recordPath(stateDir, target);
    if (!create && !existsSync(path)) return undefined;
    const key = profileKey(configDir, target.profile, create);
    if (!key) return undefined;
    let link: unknown;
    try {
      mkdirSync(recordsDir(stateDir), { recursive: true, mode: 0o700 });
      prepareFile(path);
    } catch (err) {
      // A link where the record should be (SQLite would follow it): set aside like a corrupt file.
      if ((err as NodeJS.ErrnoException).code !== 'ELOOP') throw stateDirError(err, stateDir);
      link = err;
    }
    let record: DeltaRecord | undefined;
    try {
      if (link !== undefined) throw link;
      record = new DeltaRecord(path, key, openDatabase(path), target, warn);
      record.checkKey(target);
      return record;
    } catch (err) {
      record?.db.close();
      if (!isCorruption(err) && err !== link) throw DeltaRecord.failure(err, path);
      if (!create) {
        warn(
          `Warning: the delta record ${path} is corrupt (${(err as Error).message}); it is not used. The next push with --changed-only sets it aside and sends everything (always safe).`,
        );
        return undefined;
      }
      const aside = DeltaRecord.setAside(path, err, warn);
      try {
        prepareFile(path);
        record = new DeltaRecord(path, key, openDatabase(path), target, warn);
        record.checkKey(target);
        return record;
      } catch (again) {
        throw DeltaRecord.failure(again, aside);
      }
    }
  }

  /** A record that holds nothing (a check-only run where none was ever made): everything is new. */
  static empty(): DeltaRecord {
    return new DeltaRecord(null, randomBytes(KEY_BYTES), createSchema(new Database(':memory:')), null, () => {});
  }

  private static failure(err: unknown, path: string): unknown {
    return (
      environmentError(
        err,
        path,
        'the delta record',
        'free space there or make it writable (or set LEADCTL_STATE_DIR to a folder with room); deleting the record only makes the next --changed-only run send everything',
      ) ?? err
    );
  }

  private static setAside(path: string, err: unknown, warn: (line: string) => void): string {
    let aside: string;
    try {
      aside = setAsideCorrupt(path);
    } catch (moveErr) {
      throw DeltaRecord.failure(moveErr, path);
    }
    warn(
      `Warning: the delta record ${path} is corrupt (${(err as Error).message}); it was set aside as ${aside}. A fresh record starts now: what it does not hold is sent (always safe).`,
    );
    return aside;
  }

  /**
   * Runs `work` on the database; a corrupt file found on the way is set aside and replaced by a
   * fresh record, and `work` runs again on it (a lookup then finds nothing: the customer is sent),
   * unless `again` is false (then nothing is returned).
   */
  private guard<T>(work: () => T, again?: true): T;
  private guard(work: () => void, again: false): void;
  private guard<T>(work: () => T, again = true): T | undefined {
    try {
      return work();
    } catch (err) {
      if (this.path === null || this.target === null) throw err;
      if (!isCorruption(err)) throw DeltaRecord.failure(err, this.path);
      this.replaceCorrupt(err);
      if (!again) return undefined;
      try {
        return work();
      } catch (again) {
        throw DeltaRecord.failure(again, this.path);
      }
    }
  }

  private replaceCorrupt(err: unknown): void {
    const path = this.path!;
    clearTimeout(this.readTimer);
    this.readTimer = undefined;
    this.reads = 0;
    try {
      this.db.close();
    } catch {
      // a corrupt file may refuse even that: it is set aside all the same
    }
    DeltaRecord.setAside(path, err, this.warn);
    try {
      prepareFile(path);
      this.db = openDatabase(path);
    } catch (again) {
      throw DeltaRecord.failure(again, path);
    }
    this.statements = DeltaRecord.prepare(this.db);
    this.generation++;
    this.checkKey(this.target!);
  }

  /** Digests made under another key (a key deleted and made anew) match nothing: start empty. */
  private checkKey(target: RecordTarget): void {
    const fingerprint = this.keyed.digest('fingerprint', 8).toString('hex');
    const stored = this.db.prepare('SELECT v FROM meta WHERE k = ?').get('key') as { v: string } | undefined;
    if (stored?.v === fingerprint) return;
    this.db.transaction(() => {
      this.db.exec('DELETE FROM customers; DELETE FROM lists; DELETE FROM list_values; DELETE FROM meta;');
      const put = this.db.prepare('INSERT INTO meta (k, v) VALUES (?, ?)');
      put.run('version', SCHEMA_VERSION);
      put.run('key', fingerprint);
      put.run('profile', target.profile);
      put.run('base_url', target.baseUrl);
    })();
  }

  /** A keyed digest of a text: the same text gives the same digest under this profile's key only. */
  digest(kind: string, text: string): Buffer {
    return this.keyed.digest(`${kind}\0${text}`, DIGEST_BYTES);
  }

  /**
   * The same for customers' raw lines under a context, one per customer of every run: SHA-256 of
   * the lines under a secret prefix derived from the key and the context, DIGEST_BYTES of it in
   * hex. One call per customer (crypto.hash): a Hash object copied, updated and digested cost 3x
   * more, a sixth of a 1%-changed run. Equal lines are all it tells; without the key nothing can
   * be guessed back from it.
   */
  rawDigester(context: string): (text: string) => string {
    return prefixedDigester(`${this.keyed.digest(`raw lines\0${context}`).toString('hex')}\0`, DIGEST_BYTES);
  }

  /**
   * Lookups run inside a read transaction of up to READS_PER_TRANSACTION lookups: one lookup in a
   * transaction of its own costs the file locking every time (11 µs against 3 µs, measured). It
   * ends before any write and after that many reads, so other processes are never kept waiting.
   */
  private beginRead(): void {
    if (this.reads === 0 && !this.db.inTransaction) {
      this.db.exec('BEGIN');
      // A run that waits on its input between lookups must not hold the file meanwhile.
      this.readTimer = setTimeout(() => this.endReads(), READ_TRANSACTION_MS);
      this.readTimer.unref();
    }
    if (++this.reads >= READS_PER_TRANSACTION) this.endReads();
  }

  customer(id: Buffer): RememberedCustomer | undefined {
    return this.guard(() => {
      this.beginRead();
      const row = this.statements.getCustomer.get(id);
      return row ? { payload: row.payload, sentAt: row.sent_at, run: row.run } : undefined;
    });
  }

  /**
   * For each digest of raw lines, the loans and payments recorded with them, when the record holds
   * them beside the payload it holds for their customer (the lines name it), sent at `sentSince`
   * or later by another run than `run`.
   */
  knownRaw(
    raws: readonly string[],
    run: string,
    sentSince: number,
  ): ({ loans: number; payments: number } | undefined)[] {
    const index = this.rawIndex(run, sentSince);
    if (index) return raws.map((raw) => index.find(raw));
    return raws.map((raw) =>
      this.guard(() => {
        this.beginRead();
        const counts = this.statements.knownRaw.get(Buffer.from(raw, 'hex'), run, sentSince);
        if (counts === undefined || counts.length !== 8) return undefined;
        return { loans: counts.readUInt32BE(0), payments: counts.readUInt32BE(4) };
      }),
    );
  }

  /**
   * The raw digests a run may find (see raw-index.ts), read once per run; undefined for a record
   * of more than `rawIndexMax` customers, which is looked up one customer at a time instead.
   */
  private rawIndex(run: string, sentSince: number): RawIndex | undefined {
    const held = this.rawIndexHeld;
    if (held && held.run === run && held.sentSince === sentSince && held.generation === this.generation)
      return held.index;
    const index = this.guard(() => {
      this.beginRead();
      if (this.statements.countCustomers.get()!.n > DeltaRecord.rawIndexMax) return undefined;
      return new RawIndex(this.statements.rawIndex.get(run, sentSince) ?? '');
    });
    this.rawIndexHeld = { run, sentSince, generation: this.generation, index };
    return index;
  }

  get customerCount(): number {
    return this.guard(() => this.statements.countCustomers.get()!.n);
  }

  /** What the service acknowledged (one transaction) and what it refused (forgotten, so sent again). */
  settle(remember: readonly CustomerDigest[], forget: readonly CustomerDigest[], at: number, run: string): void {
    this.settleAll([{ remember, forget, atMs: at }], run);
  }

  /** Several settlements, in order, in one transaction. */
  settleAll(
    settled: readonly { remember: readonly CustomerDigest[]; forget: readonly CustomerDigest[]; atMs: number }[],
    run: string,
  ): void {
    if (settled.every((s) => s.remember.length === 0 && s.forget.length === 0)) return;
    this.guard(() => {
      this.endReads();
      this.db.transaction(() => {
        for (const { remember, forget, atMs } of settled) {
          for (const c of remember)
            this.statements.putCustomer.run(c.id, c.payload, c.raw ? rawBlob(c.raw, c.payload) : null, atMs, run);
          for (const c of forget) this.statements.dropCustomer.run(c.id);
        }
      })();
    });
  }

  /**
   * Raw digests of customers found unchanged by their payload (read from other rows than those
   * recorded, or recorded without them): kept only while the record holds that same payload.
   */
  recordRaw(customers: readonly CustomerDigest[]): void {
    if (customers.length === 0) return;
    this.guard(() => {
      this.endReads();
      this.db.transaction(() => {
        for (const c of customers) if (c.raw) this.statements.setRaw.run(rawBlob(c.raw, c.payload), c.id, c.payload);
      })();
    });
  }

  /** What the record holds, in counts (never the digests). */
  describe(): {
    customers: number;
    last_sent: string | null;
    lists: { list_id: number; type: string; values: number; uploaded_at: string }[];
  } {
    return this.guard(() => this.describeNow());
  }

  private describeNow(): {
    customers: number;
    last_sent: string | null;
    lists: { list_id: number; type: string; values: number; uploaded_at: string }[];
  } {
    const last = this.db.prepare('SELECT max(sent_at) AS t FROM customers').get() as { t: number | null };
    const lists = this.db.prepare('SELECT list_id, type, count, uploaded_at FROM lists ORDER BY list_id').all() as {
      list_id: number;
      type: string;
      count: number;
      uploaded_at: number;
    }[];
    return {
      customers: this.customerCount,
      last_sent: last.t === null ? null : new Date(last.t).toISOString(),
      lists: lists.map((l) => ({
        list_id: l.list_id,
        type: l.type,
        values: l.count,
        uploaded_at: new Date(l.uploaded_at).toISOString(),
      })),
    };
  }

  // ---- lists ------------------------------------------------------------------------------

  list(listId: number): { type: string; count: number; uploadedAt: number } | undefined {
    const row = this.guard(
      () =>
        this.db.prepare('SELECT type, count, uploaded_at FROM lists WHERE list_id = ?').get(listId) as
          | { type: string; count: number; uploaded_at: number }
          | undefined,
    );
    return row ? { type: row.type, count: row.count, uploadedAt: row.uploaded_at } : undefined;
  }

  /** A test of membership of the values last uploaded to `listId`. */
  listLookup(listId: number): (value: Buffer) => boolean {
    let statement: Database.Statement | undefined;
    let generation = -1;
    return (value) =>
      this.guard(() => {
        if (generation !== this.generation) {
          statement = this.db.prepare('SELECT 1 FROM list_values WHERE list_id = ? AND value = ?').pluck();
          generation = this.generation;
        }
        this.beginRead();
        return statement!.get(listId, value) !== undefined;
      });
  }

  /** Replaces what the record holds of a list with the digests of the values just uploaded. */
  rememberList(listId: number, type: string, values: Iterable<Buffer>, at: number): void {
    // Not run again on a fresh record after a corrupt one: the values are read once (a generator).
    this.guard(() => this.rememberListNow(listId, type, values, at), false);
  }

  private rememberListNow(listId: number, type: string, values: Iterable<Buffer>, at: number): void {
    this.endReads();
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM list_values WHERE list_id = ?').run(listId);
      const put = this.db.prepare('INSERT OR IGNORE INTO list_values (list_id, value) VALUES (?, ?)');
      let count = 0;
      for (const value of values) {
        put.run(listId, value);
        count++;
      }
      this.db
        .prepare(
          'INSERT INTO lists (list_id, type, count, uploaded_at) VALUES (?, ?, ?, ?) ON CONFLICT (list_id) DO UPDATE SET type = excluded.type, count = excluded.count, uploaded_at = excluded.uploaded_at',
        )
        .run(listId, type, count, at);
    })();
  }

  private endReads(): void {
    clearTimeout(this.readTimer);
    this.readTimer = undefined;
    if (this.reads > 0 && this.db.open && this.db.inTransaction) this.db.exec('COMMIT');
    this.reads = 0;
  }

  close(): void {
    if (!this.db.open) return;
    this.endReads();
    this.db.close();
  }
}
