import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A tiny tmpfs (a full disk on demand), when the tests run as root and may mount: `{ dir, unmount }`;
 * otherwise `{ skipped }` with the reason, which the test prints (never a silent pass).
 */
export function mountTinyFs(
  parent: string,
  name: string,
  size = '64k',
): { dir: string; unmount(): void } | { skipped: string } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0)
    return { skipped: 'not root: cannot mount a tmpfs to fill' };
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size},mode=0777`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { skipped: `mount -t tmpfs is not permitted here: ${(err as Error).message.split('\n')[0]}` };
  }
  return {
    dir,
    unmount() {
      execFileSync('umount', [dir], { stdio: 'pipe' });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Says loudly that a case could not run here, and why. */
export function reportSkipped(what: string, why: string): void {
  console.warn(`NOT RUN: ${what}: ${why}`);
}

/** A character device made with mknod in `dir` (root only): a stand-in for /dev/null or /dev/full. */
export function makeCharDevice(dir: string, name: string, major: number, minor: number): string | { skipped: string } {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return { skipped: 'not root: cannot mknod' };
  const path = join(dir, name);
  try {
    execFileSync('mknod', [path, 'c', String(major), String(minor)], { stdio: 'pipe' });
  } catch (err) {
    return { skipped: `mknod is not permitted here: ${(err as Error).message.split('\n')[0]}` };
  }
  return path;
}
