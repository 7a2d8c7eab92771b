import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const made: string[] = [];

/**
 * A new folder in the temp dir, removed after the test file that made it (test/setup/scratch.ts):
 * helpers that make one per call (a private HOME for each run) left thousands behind a day.
 */
export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every folder made since the last call. */
export function removeScratchDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}
