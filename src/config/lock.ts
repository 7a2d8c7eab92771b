import { closeSync, fstatSync, openSync, readFileSync, rmSync, type Stats, statSync, writeSync } from 'node:fs';
import { isProcessAlive } from '../io/process.js';
import { takeOverStaleLock } from '../io/takeover.js';

/** A lock older than this, whose process is gone, is taken to be left behind by a crashed process. */
const STALE_AFTER_MS = 15_000;
const WAIT_STEP_MS = 20;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Runs `fn` while holding an exclusive lock file next to the config file, so that two
 * leadctl processes (cron beside a person) never interleave their read-modify-write.
 * The lock is a file created with O_EXCL: portable, and no extra dependency.
 */
export function withFileLock<T>(lockPath: string, fn: () => T, timeoutMs = 10_000): T {
  const deadline = Date.now() + timeoutMs;
  let fd: number | undefined;
  while (fd === undefined) {
    try {
      fd = openSync(lockPath, 'wx', 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const stale = staleLock(lockPath);
      if (stale && breakStaleLock(lockPath, stale)) continue;
      if (Date.now() > deadline) {
        throw new Error(
          `the configuration is locked by another leadctl process (${lockPath}); if none is running, delete that file`,
        );
      }
      sleepSync(WAIT_STEP_MS + Math.floor(Math.random() * WAIT_STEP_MS));
    }
  }
  let mine: Stats | undefined;
  try {
    writeSync(fd, `${process.pid}\n`);
    mine = fstatSync(fd);
    return fn();
  } finally {
    closeSync(fd);
    // Only our own lock: one taken over meanwhile (we were thought dead) belongs to its new holder.
    if (mine === undefined || sameFile(statOrUndefined(lockPath), mine)) rmSync(lockPath, { force: true });
  }
}

/** The lock's file when it is stale: old, and its process (when it wrote one) no longer runs here. */
export function staleLock(lockPath: string): Stats | undefined {
  const info = statOrUndefined(lockPath);
  if (info === undefined || Date.now() - info.mtimeMs <= STALE_AFTER_MS) return undefined;
  let pid = Number.NaN;
  try {
    pid = Number(readFileSync(lockPath, 'utf8').trim());
  } catch {
    // unreadable or gone: judged by its age alone
  }
  return Number.isInteger(pid) && pid > 0 && isProcessAlive(pid) ? undefined : info;
}

/**
 * Removes a stale lock, `seen` when it was judged so, unless it was replaced meanwhile (see
 * takeOverStaleLock): only while it is still the file judged stale. False when another process is
 * taking it over (wait, then look again).
 */
export function breakStaleLock(lockPath: string, seen: Stats): boolean {
  return takeOverStaleLock(lockPath, () => sameFile(statOrUndefined(lockPath), seen), STALE_AFTER_MS);
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path);
  } catch {
    return undefined; // vanished meanwhile: simply try again
  }
}

/** The same file, not merely the same inode: a file created after one is removed often gets its number. */
function sameFile(a: Stats | undefined, b: Stats): boolean {
  return a !== undefined && a.ino === b.ino && a.dev === b.dev && a.ctimeMs === b.ctimeMs && a.mtimeMs === b.mtimeMs;
}
