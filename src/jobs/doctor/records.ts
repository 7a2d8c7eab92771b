import Database from 'better-sqlite3';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ExitCode } from '../../errors.js';
import { profilePrefix, recordPath, recordsDir, type RecordTarget } from '../delta/record.js';
import { type CheckResult, duration, errorCode, fail, ok, warn } from './check.js';

/** At most this many damaged files are named in a value; the rest are counted. */
const NAMED = 3;

function listFiles(dir: string, suffix: string): string[] | { error: string } {
  if (!existsSync(dir)) return [];
  try {
    return readdirSync(dir)
      .filter((n) => n.endsWith(suffix))
      .sort()
      .map((n) => join(dir, n));
  } catch (err) {
    return { error: errorCode(err) };
  }
}

function named(paths: string[]): string {
  const shown = paths.slice(0, NAMED).join(', ');
  return paths.length > NAMED ? `${shown} and ${paths.length - NAMED} more` : shown;
}

interface RecordState {
  path: string;
  problem?: string;
  customers?: number;
  lastSent?: number | null;
}

/** Opens read-only (never creating, never rolling a journal back) and asks SQLite to check it. */
function inspectRecord(path: string): RecordState {
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const rows = db.pragma('quick_check', { simple: false }) as Array<{ quick_check: string }>;
    const problems = rows.map((r) => r.quick_check).filter((r) => r !== 'ok');
    if (problems.length > 0) return { path, problem: problems.slice(0, 2).join('; ') };
    const c = db.prepare('SELECT count(*) AS n, max(sent_at) AS t FROM customers').get() as {
      n: number;
      t: number | null;
    };
    return { path, customers: c.n, lastSent: c.t };
  } catch (err) {
    return { path, problem: (err as Error).message };
  } finally {
    db?.close();
  }
}

/**
 * The delta records (`--changed-only`, `lists diff`) in the state folder: each file a sound SQLite
 * database (`PRAGMA quick_check`), opened read-only. `profiles` name the records in the hint.
 */
export function checkDeltaRecords(
  stateDir: string,
  target: RecordTarget | undefined,
  profiles: readonly string[],
  now: Date,
): CheckResult {
  const dir = recordsDir(stateDir);
  const found = listFiles(dir, '.sqlite');
  if (!Array.isArray(found))
    return fail('delta-record', `${dir} cannot be read (${found.error})`, 'check its permissions', ExitCode.USAGE);
  if (found.length === 0) return ok('delta-record', 'none yet (made by the first --changed-only push or list upload)');

  const states = found.map(inspectRecord);
  const damaged = states.filter((s) => s.problem !== undefined);
  const active = target ? recordPath(stateDir, target) : undefined;
  const mine = states.find((s) => s.path === active && s.problem === undefined);
  const held = mine
    ? `; this profile's holds ${mine.customers!.toLocaleString('en-US')} customer${mine.customers === 1 ? '' : 's'}${mine.lastSent ? `, last sent ${duration(now.getTime() - mine.lastSent)} ago` : ''}`
    : '';
  if (damaged.length === 0)
    return ok(
      'delta-record',
      `${found.length} record file${found.length === 1 ? '' : 's'} intact in ${dir}${held}${aside(dir)}`,
    );

  const owner = (path: string) => profiles.find((p) => basename(path).startsWith(`${profilePrefix(p)}-`));
  const owners = [...new Set(damaged.map((d) => owner(d.path)))];
  const forget = owners
    .filter((p): p is string => p !== undefined)
    .map((p) => `\`leadctl --profile ${p} state forget\``);
  const first = damaged[0]!;
  // A push copes (src/jobs/delta/record.ts sets the file aside and starts afresh): a warning, as the
  // cost is one night that sends everything instead of what changed.
  return warn(
    'delta-record',
    `${damaged.length} of ${found.length} record files damaged: ${named(damaged.map((d) => d.path))} (${first.problem})${aside(dir)}`,
    `the next --changed-only push sets ${damaged.length === 1 ? 'it' : 'them'} aside (NAME.corrupt-TIME) and sends everything once${forget.length > 0 ? `; or delete ${damaged.length === 1 ? 'it' : 'them'} now with ${forget.join(', ')}` : ''}`,
  );
}

/** Files a run set aside as corrupt (`NAME.corrupt-TIME`): kept for a look, deleted by no one. */
function aside(dir: string): string {
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => n.includes('.corrupt-'));
  } catch {
    return '';
  }
  return names.length
    ? `; ${names.length} file${names.length === 1 ? '' : 's'} set aside as corrupt earlier (${names[0]}${names.length > 1 ? ', …' : ''}), to delete once looked at`
    : '';
}

interface JournalState {
  path: string;
  /** Damage leadctl copes with (it resends), but should be known. */
  problem?: string;
  complete: boolean;
  torn: boolean;
}

/** Reads a journal as `Journal.read` does, noting whatever it would have to skip. */
function inspectJournal(path: string): JournalState | { path: string; unreadable: string } {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return { path, unreadable: errorCode(err) };
  }
  const lines = text.split('\n');
  const last = text.endsWith('\n') ? lines.length - 2 : lines.length - 1;
  let header = false;
  let complete = false;
  let torn = false;
  const bad: number[] = [];
  const first = lines.findIndex((l) => l.trim() !== '');
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let entry: { type?: unknown; version?: unknown };
    try {
      entry = JSON.parse(line);
    } catch {
      if (i === last && !text.endsWith('\n')) torn = true;
      else bad.push(i + 1);
      return;
    }
    if (i === first) header = entry.type === 'header' && entry.version === 1;
    else if (entry.type === 'complete') complete = true;
    else if (entry.type !== 'ack' && entry.type !== 'refused') bad.push(i + 1);
  });
  if (!header) return { path, problem: 'no header line: a push starts it afresh', complete, torn };
  if (bad.length > 0)
    return {
      path,
      problem: `line${bad.length === 1 ? '' : 's'} ${bad.slice(0, 3).join(', ')} unreadable: --resume sends those chunks again`,
      complete,
      torn,
    };
  return { path, complete, torn };
}

/** The push journals (`--resume`): every line of every journal readable, the last one excepted when a crash tore it. */
export function checkJournals(stateDir: string): CheckResult {
  const dir = join(stateDir, 'journals');
  const found = listFiles(dir, '.ndjson');
  if (!Array.isArray(found))
    return fail('journals', `${dir} cannot be read (${found.error})`, 'check its permissions', ExitCode.USAGE);
  if (found.length === 0) return ok('journals', 'none (no push has run from this state folder, or none in 30 days)');
  const states = found.map(inspectJournal);
  const unreadable = states.filter((s): s is { path: string; unreadable: string } => 'unreadable' in s);
  if (unreadable.length > 0)
    return fail(
      'journals',
      `${named(unreadable.map((s) => s.path))} cannot be read (${unreadable[0]!.unreadable})`,
      'make the state folder readable and writable by the user running leadctl (a push with --resume needs it)',
      ExitCode.USAGE,
    );
  const read = states as JournalState[];
  const interrupted = read.filter((s) => !s.complete).length;
  const torn = read.filter((s) => s.torn).length;
  const summary =
    `${found.length} journal${found.length === 1 ? '' : 's'}: ${found.length - interrupted} complete` +
    (interrupted ? `, ${interrupted} of an interrupted or failed push (\`--resume\` continues it)` : '') +
    (torn ? `, ${torn} with a last line torn by a crash (ignored, as designed)` : '');
  const damaged = read.filter((s) => s.problem !== undefined);
  if (damaged.length === 0) return ok('journals', summary);
  return warn(
    'journals',
    `${summary}; damaged: ${damaged
      .slice(0, NAMED)
      .map((d) => `${d.path} (${d.problem})`)
      .join(', ')}${damaged.length > NAMED ? ` and ${damaged.length - NAMED} more` : ''}`,
    'nothing is lost (the service upserts, so a chunk sent again is harmless); delete a damaged journal to start that push afresh',
  );
}
