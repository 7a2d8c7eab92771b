import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { breakStaleLock, staleLock, withFileLock } from '../../../src/config/lock.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-lock-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let n = 0;
const lockPath = () => join(work, `config-${n++}.json.lock`);
const age = (path: string, ms: number) => {
  const then = new Date(Date.now() - ms);
  utimesSync(path, then, then);
};

describe('the config lock', () => {
  it('is not stale while its process runs, however old it is', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 30000)'], { stdio: 'ignore' });
    try {
      const lock = lockPath();
      writeFileSync(lock, `${child.pid}\n`);
      age(lock, 60_000);
      expect(staleLock(lock)).toBeUndefined();
      expect(() => withFileLock(lock, () => 'ran', 100)).toThrow(/locked by another leadctl process/);
      expect(existsSync(lock)).toBe(true);
      child.kill();
      await new Promise((resolve) => child.once('exit', resolve));
      // Its process gone, the old lock is taken over.
      expect(staleLock(lock)?.ino).toBe(statSync(lock).ino);
      expect(withFileLock(lock, () => 'ran', 100)).toBe('ran');
      expect(existsSync(lock)).toBe(false);
    } finally {
      child.kill();
    }
  });

  it('a young lock is never stale; an old one without a process id is', () => {
    const lock = lockPath();
    writeFileSync(lock, '');
    expect(staleLock(lock)).toBeUndefined();
    age(lock, 60_000);
    expect(staleLock(lock)).toBeDefined();
  });

  it('a stale lock replaced meanwhile (a waiter broke it and took a fresh one) is not broken again', () => {
    const lock = lockPath();
    writeFileSync(lock, '99999\n');
    age(lock, 60_000);
    const seen = staleLock(lock)!;
    expect(seen).toBeDefined();
    // The other waiter: removes it and takes the lock.
    rmSync(lock);
    writeFileSync(lock, `${process.pid}\n`);
    const fresh = statSync(lock).ino;
    expect(breakStaleLock(lock, seen)).toBe(true);
    expect(statSync(lock).ino).toBe(fresh);
    // The one judged stale is removed.
    const again = staleLock((age(lock, 60_000), writeFileSync(lock, '99999\n'), age(lock, 60_000), lock))!;
    expect(breakStaleLock(lock, again)).toBe(true);
    expect(existsSync(lock)).toBe(false);
  });

  it('waits while another process breaks it; a break left by a crash goes once old', () => {
    const lock = lockPath();
    writeFileSync(lock, '99999\n');
    age(lock, 60_000);
    writeFileSync(`${lock}.takeover`, '');
    expect(breakStaleLock(lock, staleLock(lock)!)).toBe(false);
    expect(() => withFileLock(lock, () => 'ran', 100)).toThrow(/locked by another leadctl process/);
    age(`${lock}.takeover`, 60_000);
    expect(withFileLock(lock, () => 'ran', 1000)).toBe('ran');
    expect(existsSync(lock)).toBe(false);
    expect(existsSync(`${lock}.takeover`)).toBe(false);
  });

  it("releases only its own lock: one taken over meanwhile stays its new holder's", () => {
    const lock = lockPath();
    const result = withFileLock(lock, () => {
      rmSync(lock);
      writeFileSync(lock, '12345\n');
      return 'ran';
    });
    expect(result).toBe('ran');
    expect(existsSync(lock)).toBe(true);
  });
});
