import { createHash } from 'node:crypto';
import { type Stats, statSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';

/**
 * What identifies an input file without reading it: its size and modification time. An export
 * still being written moves one of them, so a file is checked against the stamp it had when it was
 * opened; what a resume is keyed on is the digest of its bytes (`sha256OfFile`), which costs a read.
 */
export interface InputStamp {
  size: number;
  mtimeMs: number;
}

export function stampOf(info: Pick<Stats, 'size' | 'mtimeMs'>): InputStamp {
  return { size: info.size, mtimeMs: info.mtimeMs };
}

/** The stamp of `full` now; undefined when it cannot be had (gone, unreadable). */
export function currentStamp(full: string): InputStamp | undefined {
  try {
    return stampOf(statSync(full));
  } catch {
    return undefined;
  }
}

export function sameStamp(a: InputStamp, b: InputStamp | undefined): boolean {
  return b !== undefined && a.size === b.size && a.mtimeMs === b.mtimeMs;
}

/** `1234 bytes, modified 2026-01-02T03:04:05.678Z` (milliseconds rounded, as `Stats.mtime` has them). */
export function describeStamp(stamp: InputStamp): string {
  return `${stamp.size} bytes, modified ${new Date(Math.round(stamp.mtimeMs)).toISOString()}`;
}

/**
 * Standard input, a pipe or a FIFO can be read only once (and opening a FIFO to hash it would
 * wait for a writer): only a regular file can be hashed ahead or read twice. A path that cannot be
 * stat'ed counts as regular here, so that opening it says what is wrong.
 */
export function isRegularFile(full: string): boolean {
  try {
    return statSync(full).isFile();
  } catch {
    return true;
  }
}

/** Feeds a file's bytes to `hash` through one reused buffer (no garbage however large the file). */
async function hashFile(path: string, hash: { update(data: Uint8Array): unknown }): Promise<void> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.allocUnsafe(1 << 20);
    for (
      let n = (await handle.read(buffer, 0, buffer.length)).bytesRead;
      n > 0;
      n = (await handle.read(buffer, 0, buffer.length)).bytesRead
    ) {
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    await handle.close();
  }
}

/** Files from this size are hashed on a thread of their own; below it, starting one costs more than it spares. */
const OFF_THREAD_BYTES = 8 * 1024 * 1024;

const HASH_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const { closeSync, openSync, readSync } = require('node:fs');
const hash = createHash('sha256');
const fd = openSync(workerData, 'r');
try {
  const buffer = Buffer.allocUnsafe(1 << 20);
  for (let n; (n = readSync(fd, buffer, 0, buffer.length, null)) > 0; ) hash.update(buffer.subarray(0, n));
} finally {
  closeSync(fd);
}
parentPort.postMessage(hash.digest('hex'));
`;

/**
 * The SHA-256 of a file's bytes, in hex. A large file is hashed on a worker thread, so that a push
 * reads on while its journal's key is made (0.1 s of CPU for a 108 MB export, on the other core).
 */
export async function sha256OfFile(path: string): Promise<string> {
  let size = 0;
  try {
    size = statSync(path).size;
  } catch {
    // hashFile says what is wrong with it
  }
  if (size < OFF_THREAD_BYTES) {
    const hash = createHash('sha256');
    await hashFile(path, hash);
    return hash.digest('hex');
  }
  return new Promise((resolve, reject) => {
    const worker = new Worker(HASH_WORKER, { eval: true, workerData: path });
    worker.once('message', (hex: string) => resolve(hex));
    worker.once('error', reject);
    worker.once('exit', (code) => reject(new Error(`the thread hashing ${path} stopped (exit code ${code})`)));
  });
}
