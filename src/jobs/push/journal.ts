import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../../errors.js';
import { stateDirError } from '../../config/state-dir.js';
import { writeFileSafely } from '../../io/safe-file.js';

/**
 * The journal of a push: one file per (inputs' content, profile, base URL) in the state folder,
 * holding a header line and then one line per chunk the service acknowledged. Lines are appended
 * and flushed to disk as acknowledgements arrive, so a process killed at any moment leaves a
 * journal that is right up to its last complete line (a torn last line is ignored, and so is a
 * line that is not an entry of the right shape). A journal with no valid header for these inputs
 * (overwritten, truncated to nothing useful, a link) is set aside as `NAME.corrupt-<time>` with a
 * warning, and the run sends everything (always safe).
 */

/** Appends, never through a link (the journal is always a regular file leadctl made). */
const APPEND = constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW;

export interface JournalSettings {
  maxCustomers: number;
  maxBytes: number;
  /** `--changed-only` (with its --max-age) or `--full`: a resume must choose the customers the same way. */
  delta?: string;
}

export interface JournalHeader {
  type: 'header';
  version: 1;
  key: string;
  created: string;
  profile: string;
  base_url: string;
  inputs: string[];
  settings: JournalSettings;
  /** How the chunks were cut: straight from a sorted file, or from the staging. Resume must do the same. */
  mode?: 'streamed' | 'staged';
}

export interface SkippedEntry {
  path: string;
  id: string | null;
  errors: string[];
  /**
   * Names no record of the request (a customer index past its end): placed on none, its words go
   * to the rejects file, and the answer that held it gave no verdict on any of its customers.
   */
  unplaced?: true;
}

export interface JournalAck {
  type: 'ack';
  chunk: number;
  /** First and last customer id and their count: a check that a rerun cut the same chunk. */
  first: string;
  last: string;
  customers: number;
  /** What the service reported as skipped in that chunk. */
  skipped: SkippedEntry[];
  /**
   * Customers (indices in the chunk) the service took with a 2xx that carried no per-record detail:
   * sent, but not confirmed one by one. Absent when every customer had a verdict.
   */
  unconfirmed?: number[];
  at: string;
}

/**
 * A chunk the service refused as a whole (a 4xx for the request): written down so the journal
 * tells what happened, but never an acknowledgement, so `--resume` sends it again.
 */
export interface JournalRefusal {
  type: 'refused';
  chunk: number;
  status: number | null;
  reason: string;
  at: string;
}

interface JournalDone {
  type: 'complete';
  at: string;
}

/**
 * The journal's key: the content of every input (in order, with its role) and the mapping, the
 * profile, the base URL and the client: another client's acknowledgements are not ours.
 */
export function journalKey(contentDigest: string, profile: string, baseUrl: string, clientId = ''): string {
  return createHash('sha256')
    .update(`${contentDigest}\n${profile}\n${baseUrl.replace(/\/+$/, '')}\n${clientId}`)
    .digest('hex');
}

/** Longest an acknowledgement waits in the system's cache before the journal is synced to disk. */
const JOURNAL_SYNC_MS = 1000;

/** A journal opened for a run: `resumed` continues an interrupted one; `restarted`, one run the other way, started afresh. */
export interface OpenedJournal {
  journal: Journal;
  resumed: boolean;
  restarted?: boolean;
}

export class Journal {
  private fd: number | undefined;
  private unsynced = false;
  private syncedAt = Number.NEGATIVE_INFINITY;
  private readonly acks = new Map<number, JournalAck>();
  private completeAt: string | undefined;
  private tornTail = false;

  private constructor(
    readonly path: string,
    readonly header: JournalHeader,
  ) {}

  /**
   * Opens the journal for these inputs. With `resume`, an existing journal is read and continued
   * (its settings must match); without, a fresh one replaces it.
   */
  static open(
    dir: string,
    header: Omit<JournalHeader, 'type' | 'version' | 'created'>,
    resume: boolean,
    now: Date,
    warn: (line: string) => void = () => {},
  ): OpenedJournal {
    try {
      return Journal.openIn(dir, header, resume, now, warn);
    } catch (err) {
      throw stateDirError(err, dir);
    }
  }

  private static openIn(
    dir: string,
    header: Omit<JournalHeader, 'type' | 'version' | 'created'>,
    resume: boolean,
    now: Date,
    warn: (line: string) => void,
  ): OpenedJournal {
    const folder = join(dir, 'journals');
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    pruneStale(folder);
    const path = join(folder, `${header.key}.ndjson`);
    if (resume && existsSync(path)) {
      const journal = lstatSync(path).isFile() ? Journal.read(path) : undefined;
      if (!journal || journal.header.key !== header.key) {
        const aside = `${path}.corrupt-${now
          .toISOString()
          .replace(/[-:]/g, '')
          .replace(/\.\d+Z$/, 'Z')}`;
        renameSync(path, aside);
        warn(
          `Warning: the journal ${path} is corrupt or was edited (no valid header for these inputs); it was set aside as ${aside}`,
        );
      }
      if (journal && journal.header.key === header.key) {
        const a = journal.header.settings;
        const b = header.settings;
        if (a.maxCustomers !== b.maxCustomers || a.maxBytes !== b.maxBytes) {
          throw new UsageError(
            `the interrupted push was cut with --chunk-size ${a.maxCustomers} --max-bytes ${a.maxBytes}; resume with the same values (this run asked for ${b.maxCustomers} and ${b.maxBytes})`,
          );
        }
        // Run the other way (a weekday's --changed-only after Sunday's --full of the same bytes), the
        // push cannot continue that one, which chose other customers: it starts afresh, the way it
        // was asked (upserts are safe to repeat, and --changed-only asks the record, which holds
        // what the interrupted run had acknowledged). Refusing stopped every retry of the cron job.
        const sameDelta = (a.delta ?? 'none') === (b.delta ?? 'none');
        if (!sameDelta) {
          const say = (d: string | undefined) =>
            d === undefined ? 'without --changed-only or --full' : d === 'full' ? 'with --full' : `with --${d}`;
          if (!journal.complete)
            warn(
              `Note: the interrupted push of these inputs ran ${say(a.delta)} and this one ${say(b.delta)}: it starts afresh, as asked, rather than resuming that one`,
            );
          return { ...Journal.fresh(path, header, now), restarted: !journal.complete };
        }
        journal.fd = openSync(path, APPEND);
        // A line torn by a crash must not swallow the first acknowledgement appended after it.
        if (journal.tornTail) writeSync(journal.fd, '\n');
        return { journal, resumed: true };
      }
    }
    return Journal.fresh(path, header, now);
  }

  private static fresh(
    path: string,
    header: Omit<JournalHeader, 'type' | 'version' | 'created'>,
    now: Date,
  ): { journal: Journal; resumed: boolean } {
    const full: JournalHeader = { type: 'header', version: 1, created: now.toISOString(), ...header };
    const journal = new Journal(path, full);
    // Whole or not at all (flushed, then renamed over any older journal), never through a link.
    writeFileSafely(path, JSON.stringify(full) + '\n', { what: 'the journal' });
    journal.fd = openSync(path, APPEND);
    return { journal, resumed: false };
  }

  private static read(path: string): Journal | undefined {
    const text = readFileSync(path, 'utf8');
    const lines = text.split('\n');
    let journal: Journal | undefined;
    for (const line of lines) {
      if (line.trim() === '') continue;
      let entry: JournalHeader | JournalAck | JournalDone;
      try {
        entry = JSON.parse(line);
      } catch {
        continue; // a line torn by a crash: that chunk is simply sent again
      }
      // An edited line that parses but is no entry (null, a number, fields missing) counts as torn.
      if (!isEntry(entry)) continue;
      if (entry.type === 'header') journal = new Journal(path, entry);
      else if (journal && entry.type === 'ack') journal.acks.set(entry.chunk, entry);
      else if (journal && entry.type === 'complete') journal.completeAt = entry.at;
    }
    if (journal) journal.tornTail = text.length > 0 && !text.endsWith('\n');
    return journal;
  }

  get acknowledged(): number {
    return this.acks.size;
  }

  get complete(): boolean {
    return this.completeAt !== undefined;
  }

  ack(chunk: number): JournalAck | undefined {
    return this.acks.get(chunk);
  }

  record(entry: Omit<JournalAck, 'type'>): void {
    const ack: JournalAck = { type: 'ack', ...entry };
    this.acks.set(ack.chunk, ack);
    this.append(ack);
  }

  refused(entry: Omit<JournalRefusal, 'type'>): void {
    this.append({ type: 'refused', ...entry });
  }

  markComplete(now: Date): void {
    this.completeAt = now.toISOString();
    this.append({ type: 'complete', at: this.completeAt }, true);
  }

  /**
   * Each entry is written at once (a crash of the process loses none); it reaches the disk itself
   * within JOURNAL_SYNC_MS, at the end, and at once for the last one. An fsync per acknowledgement
   * held the run's one thread 3 ms each (0.3 s of an 8 s push), and an entry lost with the machine
   * only means its chunk is sent again.
   */
  private append(entry: object, sync = false): void {
    if (this.fd === undefined) return;
    writeSync(this.fd, JSON.stringify(entry) + '\n');
    this.unsynced = true;
    if (sync || performance.now() - this.syncedAt >= JOURNAL_SYNC_MS) this.sync();
  }

  /** Syncs to the disk what was written since the last sync; throws if that fails. */
  sync(): void {
    if (this.fd === undefined || !this.unsynced) return;
    fsyncSync(this.fd);
    this.unsynced = false;
    this.syncedAt = performance.now();
  }

  /**
   * Syncs what is left and closes the file, throwing nothing: it runs in a `finally`, where a
   * throw would hide the run's own outcome or error (and skip the lock's release). A run learns
   * of a failed sync from `sync()` before it reports.
   */
  close(): void {
    const fd = this.fd;
    if (fd === undefined) return;
    this.fd = undefined;
    try {
      if (this.unsynced) fsyncSync(fd);
    } catch {
      // Reported by the run's own sync(), or moot: the run already failed.
    }
    try {
      closeSync(fd);
    } catch {
      // As above.
    }
  }
}

function isEntry(entry: unknown): entry is JournalHeader | JournalAck | JournalDone {
  if (typeof entry !== 'object' || entry === null) return false;
  const e = entry as Record<string, unknown>;
  if (e.type === 'header') {
    const settings = e.settings as Record<string, unknown> | null | undefined;
    return (
      typeof e.key === 'string' &&
      typeof e.created === 'string' &&
      typeof settings === 'object' &&
      settings !== null &&
      typeof settings.maxCustomers === 'number' &&
      typeof settings.maxBytes === 'number'
    );
  }
  if (e.type === 'ack')
    return (
      Number.isInteger(e.chunk) &&
      (e.chunk as number) >= 0 &&
      typeof e.first === 'string' &&
      typeof e.last === 'string' &&
      typeof e.customers === 'number' &&
      Array.isArray(e.skipped) &&
      e.skipped.every(
        (x: unknown) =>
          typeof x === 'object' &&
          x !== null &&
          typeof (x as SkippedEntry).path === 'string' &&
          Array.isArray((x as SkippedEntry).errors),
      ) &&
      (e.unconfirmed === undefined || (Array.isArray(e.unconfirmed) && e.unconfirmed.every(Number.isInteger)))
    );
  if (e.type === 'complete') return typeof e.at === 'string';
  return e.type === 'refused';
}

/** Journals untouched this long are of exports nobody will resume; they would only pile up. */
export const JOURNAL_KEEP_DAYS = 30;

function pruneStale(folder: string): void {
  // Against the file system's clock, which stamps the files, not the run's (tests fix that one).
  const limit = Date.now() - JOURNAL_KEEP_DAYS * 24 * 3600 * 1000;
  for (const name of readdirSync(folder)) {
    const ours = ['.ndjson', '.tmp', '.partial'].some((end) => name.endsWith(end)) || name.includes('.corrupt-');
    if (!ours) continue;
    const path = join(folder, name);
    try {
      if (statSync(path).mtimeMs < limit) rmSync(path, { force: true });
    } catch {
      // Gone already, or not ours to judge: pruning is housekeeping, never a reason to fail a push.
    }
  }
}
