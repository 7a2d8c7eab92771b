import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ExitCode, LockedError } from '../../errors.js';
import { stateDirError } from '../../config/state-dir.js';
import { bootMs, isProcessAlive, processStartMs } from '../../io/process.js';
import { takeOverStaleLock } from '../../io/takeover.js';

/**
 * One push per profile at a time: an overlapping cron run must not send the same export twice
 * in parallel or write the same journal. The lock is a file created exclusively, holding the
 * owner's pid and host; a lock whose process is gone (a crash, SIGKILL) is taken over.
 */

/** Exit code of a run that found another push holding the profile's lock. */
export const LOCKED_EXIT_CODE = ExitCode.LOCKED;

export class PushLockedError extends LockedError {
  constructor(message: string, hint: string) {
    super(message, { hint });
  }
}

export interface LockOwner {
  pid: number;
  host: string;
  started: string;
  command: string;
}

/** A lock file that was half written by a process that died right away is stale after this. */
const UNREADABLE_STALE_MS = 30_000;

export class PushLock {
  private constructor(
    readonly path: string,
    private readonly owner: LockOwner,
  ) {}

  static acquire(dir: string, profile: string, command: string, now: Date): PushLock {
    const folder = join(dir, 'locks');
    try {
      mkdirSync(folder, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw stateDirError(err, dir);
    }
    const path = join(folder, `${profile.replace(/[^A-Za-z0-9._-]/g, '_')}.lock`);
    const owner: LockOwner = { pid: process.pid, host: hostname(), started: now.toISOString(), command };
    for (let attempt = 0; attempt < 5; attempt++) {
      try {
        const fd = openSync(path, 'wx', 0o600);
        writeSync(fd, JSON.stringify(owner) + '\n');
        closeSync(fd);
        return new PushLock(path, owner);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw stateDirError(err, dir);
      }
      const holder = readOwner(path);
      if (holder === 'gone') continue;
      if (holder === 'unreadable' ? isOld(path) : isDead(holder)) {
        removeStale(path, holder);
        continue;
      }
      const who =
        holder === 'unreadable'
          ? 'another process'
          : `process ${holder.pid} on ${holder.host}, started ${holder.started}`;
      throw new PushLockedError(
        `another push is running for profile "${profile}" (${who}); not starting a second one`,
        `wait for it to finish; if no push is running, delete ${path}`,
      );
    }
    throw new PushLockedError(
      `could not take the push lock for profile "${profile}"`,
      `if no push is running, delete ${path}`,
    );
  }

  /** Removes the lock if it is still ours. */
  release(): void {
    const holder = readOwner(this.path);
    if (typeof holder === 'object' && sameOwner(holder, this.owner)) {
      rmSync(this.path, { force: true });
    }
  }
}

/**
 * Removes a stale lock, unless someone took it over meanwhile (see takeOverStaleLock): a lock is
 * removed only while it still names the dead owner.
 */
export function removeStale(path: string, stale: LockOwner | 'unreadable'): void {
  takeOverStaleLock(
    path,
    () => {
      const now = readOwner(path);
      return stale === 'unreadable'
        ? now === 'unreadable' && isOld(path)
        : typeof now === 'object' && sameOwner(now, stale);
    },
    UNREADABLE_STALE_MS,
  );
}

function sameOwner(a: LockOwner, b: LockOwner): boolean {
  return a.pid === b.pid && a.host === b.host && a.started === b.started;
}

function readOwner(path: string): LockOwner | 'unreadable' | 'gone' {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'gone' : 'unreadable';
  }
  try {
    const owner = JSON.parse(text) as LockOwner;
    return typeof owner.pid === 'number' && typeof owner.host === 'string' ? owner : 'unreadable';
  } catch {
    return 'unreadable';
  }
}

/** Rounding of boot and start times (uptime's, the clock ticks'), and a clock set a little. */
const START_SLACK_MS = 10_000;

function isDead(owner: LockOwner): boolean {
  // A process on another machine (a shared state folder) cannot be checked: it is assumed alive.
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return false;
  if (!isProcessAlive(owner.pid)) return true;
  // The pid runs, but is it the owner's? After a reboot (a lock from before it) or once the pid
  // is reused, another process holds it, and the lock would stop every night's run for good.
  const started = Date.parse(owner.started);
  if (!Number.isFinite(started)) return false;
  if (started < bootMs() - START_SLACK_MS) return true;
  const pidStarted = processStartMs(owner.pid);
  return pidStarted !== undefined && pidStarted > started + START_SLACK_MS;
}

function isOld(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > UNREADABLE_STALE_MS;
  } catch {
    return true;
  }
}
