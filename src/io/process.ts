import { readFileSync } from 'node:fs';
import { uptime } from 'node:os';

/** Whether a process with this id runs on this machine (EPERM: it runs, as another user). */
export function isProcessAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When process `pid` started, in ms since the epoch, from /proc (Linux: field 22 of its stat, in
 * clock ticks since boot, at the 100 a second Linux uses); undefined where that cannot be read.
 */
export function processStartMs(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ticks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    return Number.isFinite(ticks) ? bootMs() + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

/** When this machine booted, in ms since the epoch. */
export function bootMs(): number {
  return Date.now() - uptime() * 1000;
}
