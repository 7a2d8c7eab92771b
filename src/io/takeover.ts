import { closeSync, openSync, rmSync, statSync } from 'node:fs';

/**
 * Removes a lock file judged stale, unless it was taken over meanwhile. Two processes may judge the
 * same lock stale; without this, the slower would delete the lock the faster had just created and
 * both would go on. So the check (`stillStale`, asked again here) and the removal happen under a
 * second file created exclusively (`<path>.takeover`): one process at a time. A guard left by a
 * process that died in these few lines is removed once older than `guardStaleMs`.
 * Returns false when another process is taking it over (look again a little later).
 */
export function takeOverStaleLock(path: string, stillStale: () => boolean, guardStaleMs: number): boolean {
  const guard = `${path}.takeover`;
  let fd: number;
  try {
    fd = openSync(guard, 'wx', 0o600);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if (olderThan(guard, guardStaleMs)) rmSync(guard, { force: true });
    return false;
  }
  try {
    if (stillStale()) rmSync(path, { force: true });
    return true;
  } finally {
    closeSync(fd);
    rmSync(guard, { force: true });
  }
}

function olderThan(path: string, ms: number): boolean {
  try {
    return Date.now() - statSync(path).mtimeMs > ms;
  } catch {
    return false; // gone meanwhile: nothing to remove
  }
}
