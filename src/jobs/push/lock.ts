import { closeSync, mkdirSync, openSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { ExitCode, LockedError } from '../../errors.js';
import { stateDirError } from '../../config/state-dir.js';
import { bootId, isProcessAlive, processStartTicks } from '../../io/process.js';
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
  /** The boot the owner ran in, and when it started in it (clock ticks): Linux only. */
  boot?: string;
  startTicks?: number;
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
    const boot = bootId();
    const startTicks = processStartTicks(process.pid);
    const owner: LockOwner = {
      pid: process.pid,
      host: hostname(),
      started: now.toISOString(),
      command,
      ...(boot !== undefined && startTicks !== undefined ? { boot, startTicks } : {}),
    };
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

function isDead(owner: LockOwner): boolean {
  // A process on another machine (a shared state folder) cannot be checked: it is assumed alive.
  if (owner.host !== hostname()) return false;
  if (owner.pid === process.pid) return false;
  if (!isProcessAlive(owner.pid)) return true;
  // The pid runs, but is it the owner's? After a reboot (another boot id) or once the pid is
  // reused (another start), another process holds it, and the lock would stop every night's run.
  // No wall clock: a clock stepped by NTP, or a container's own uptime, must not free a live lock.
  if (owner.boot === undefined || owner.startTicks === undefined) return false;
  const boot = bootId();
  if (boot !== undefined && boot !== owner.boot) return true;
  const ticks = processStartTicks(owner.pid);
  return ticks !== undefined && ticks !== owner.startTicks;
}

function isOld(path: string): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > UNREADABLE_STALE_MS;
  } catch {
    return true;
  }
}
