import { closeSync, openSync, rmSync, statSync, writeSync } from 'node:fs';

/** A lock older than this is taken to be left behind by a crashed process. */
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
      if (isStale(lockPath)) {
        rmSync(lockPath, { force: true });
        continue;
      }
      if (Date.now() > deadline) {
        throw new Error(
          `the configuration is locked by another leadctl process (${lockPath}); if none is running, delete that file`,
        );
      }
      sleepSync(WAIT_STEP_MS + Math.floor(Math.random() * WAIT_STEP_MS));
    }
  }
  try {
    writeSync(fd, `${process.pid}\n`);
    return fn();
  } finally {
    closeSync(fd);
    rmSync(lockPath, { force: true });
  }
}

function isStale(lockPath: string): boolean {
  try {
    return Date.now() - statSync(lockPath).mtimeMs > STALE_AFTER_MS;
  } catch {
    return false; // vanished meanwhile: simply try again
  }
}
