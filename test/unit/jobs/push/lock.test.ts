import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PushLock, PushLockedError, removeStale, type LockOwner } from '../../../../src/jobs/push/lock.js';
import { ExitCode } from '../../../../src/errors.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-lock-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
/** A state folder that does not exist yet. */
const fresh = () => join(work, `s${n++}`, 'state');
const now = new Date('2026-11-20T08:09:10.123Z');

/** The pid of a process that has ended. */
const deadPid = () =>
  Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString());

/** A minute ago: older than the 30 s after which an unreadable lock counts as abandoned. */
function age(path: string): void {
  const t = (Date.now() - 60_000) / 1000;
  utimesSync(path, t, t);
}

function lockFile(dir: string, profile = 'default'): string {
  mkdirSync(join(dir, 'locks'), { recursive: true });
  return join(dir, 'locks', `${profile}.lock`);
}

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (err) {
    return err as Error;
  }
  throw new Error('nothing thrown');
}

describe('taking the lock', () => {
  it('writes the owner to a private file in a private folder it creates', () => {
    const dir = fresh();
    const lock = PushLock.acquire(dir, 'default', 'customers batch', now);
    expect(lock.path).toBe(join(dir, 'locks', 'default.lock'));
    expect(statSync(join(dir, 'locks')).mode & 0o777).toBe(0o700);
    expect(statSync(lock.path).mode & 0o777).toBe(0o600);
    const text = readFileSync(lock.path, 'utf8');
    expect(text.endsWith('}\n')).toBe(true);
    expect(JSON.parse(text)).toMatchObject({
      pid: process.pid,
      host: hostname(),
      started: '2026-11-20T08:09:10.123Z',
      command: 'customers batch',
    });
    // On Linux, what names this process for good: the boot and its start in it.
    if (existsSync('/proc/sys/kernel/random/boot_id'))
      expect(JSON.parse(text)).toMatchObject({ boot: expect.any(String), startTicks: expect.any(Number) });
    lock.release();
    expect(existsSync(lock.path)).toBe(false);
  });

  it('names the file after the profile, with anything but letters, digits, dot, dash and underscore replaced', () => {
    const dir = fresh();
    const lock = PushLock.acquire(dir, 'a/b c:d.e-f_G9', 'customers batch', now);
    expect(lock.path).toBe(join(dir, 'locks', 'a_b_c_d.e-f_G9.lock'));
    lock.release();
  });

  it('a name the system refuses is no lock conflict: its own error', () => {
    const err = thrown(() => PushLock.acquire(fresh(), 'p'.repeat(300), 'customers batch', now));
    expect(err).not.toBeInstanceOf(PushLockedError);
    expect((err as NodeJS.ErrnoException).code).toBe('ENAMETOOLONG');
  });

  it('a lock held on another machine is respected even when its pid is free here', () => {
    const dir = fresh();
    const path = lockFile(dir);
    writeFileSync(
      path,
      JSON.stringify({ pid: deadPid(), host: 'elsewhere.example', started: '2026-11-19T00:00:00.000Z', command: 'x' }),
    );
    const err = thrown(() => PushLock.acquire(dir, 'default', 'customers batch', now));
    expect(err).toBeInstanceOf(PushLockedError);
    expect((err as PushLockedError).exitCode).toBe(ExitCode.LOCKED);
    expect(err.message).toMatch(
      /^another push is running for profile "default" \(process \d+ on elsewhere\.example, started 2026-11-19T00:00:00\.000Z\); not starting a second one$/,
    );
    expect((err as PushLockedError).hint).toBe(`wait for it to finish; if no push is running, delete ${path}`);
    expect(existsSync(path)).toBe(true);
  });

  it('a lock of a process that ended on this machine is taken over', () => {
    const dir = fresh();
    const path = lockFile(dir);
    writeFileSync(path, JSON.stringify({ pid: deadPid(), host: hostname(), started: 'x', command: 'x' }));
    const lock = PushLock.acquire(dir, 'default', 'customers batch', now);
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    expect(existsSync(`${path}.takeover`)).toBe(false);
    lock.release();
  });

  it.runIf(existsSync('/proc/sys/kernel/random/boot_id'))(
    'a lock whose pid now belongs to another process (written in another boot, or the pid reused) is taken over; its own, not',
    () => {
      const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
      const ticks = (pid: number) => {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
      };
      const live = spawn('sleep', ['60'], { stdio: 'ignore' });
      const pid = live.pid!;
      const lockOf = (fields: Record<string, unknown>) => {
        const dir = fresh();
        const path = lockFile(dir);
        writeFileSync(
          path,
          JSON.stringify({ pid, host: hostname(), started: '2026-11-20T00:00:00.000Z', command: 'x', ...fields }),
        );
        return { dir, path };
      };
      try {
        // The live process's own lock, whatever its date says (the clock may have been stepped): held.
        const own = lockOf({ boot, startTicks: ticks(pid) });
        expect(thrown(() => PushLock.acquire(own.dir, 'default', 'customers batch', now))).toBeInstanceOf(
          PushLockedError,
        );
        // Written in another boot, or by a process that started at another time under this pid: taken over.
        for (const fields of [
          { boot: 'another-boot', startTicks: ticks(pid) },
          { boot, startTicks: ticks(pid) - 1 },
        ]) {
          const stale = lockOf(fields);
          const lock = PushLock.acquire(stale.dir, 'default', 'customers batch', now);
          expect(JSON.parse(readFileSync(stale.path, 'utf8'))).toMatchObject({
            pid: process.pid,
            boot,
            startTicks: ticks(process.pid),
          });
          lock.release();
        }
        // A lock of an older leadctl (no boot or start): the pid alone decides, as before.
        const old = lockOf({});
        expect(thrown(() => PushLock.acquire(old.dir, 'default', 'customers batch', now))).toBeInstanceOf(
          PushLockedError,
        );
      } finally {
        live.kill();
      }
    },
  );

  it.each([
    ['not JSON', '{"pid": 12'],
    ['no pid', JSON.stringify({ host: hostname() })],
    ['a pid that is text', JSON.stringify({ pid: '1', host: hostname() })],
    ['no host', JSON.stringify({ pid: 1 })],
  ])('a lock file with %s: recent, held by "another process"; old, taken over', (_, text) => {
    const dir = fresh();
    const path = lockFile(dir);
    writeFileSync(path, text);
    const err = thrown(() => PushLock.acquire(dir, 'default', 'customers batch', now));
    expect(err).toBeInstanceOf(PushLockedError);
    expect(err.message).toBe(
      'another push is running for profile "default" (another process); not starting a second one',
    );
    expect(readFileSync(path, 'utf8')).toBe(text);
    age(path);
    const lock = PushLock.acquire(dir, 'default', 'customers batch', now);
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });

  it('a lock that cannot be read (a folder in its place) counts as held by another process, not as gone', () => {
    const dir = fresh();
    const path = lockFile(dir);
    mkdirSync(path);
    const err = thrown(() => PushLock.acquire(dir, 'default', 'customers batch', now));
    expect(err).toBeInstanceOf(PushLockedError);
    expect(err.message).toBe(
      'another push is running for profile "default" (another process); not starting a second one',
    );
  });

  it('gives up after a few attempts while another run holds the takeover, and says how to get out', () => {
    const dir = fresh();
    const path = lockFile(dir);
    const stale = JSON.stringify({ pid: deadPid(), host: hostname(), started: 'x', command: 'x' });
    writeFileSync(path, stale);
    writeFileSync(`${path}.takeover`, '');
    const err = thrown(() => PushLock.acquire(dir, 'default', 'customers batch', now));
    expect(err).toBeInstanceOf(PushLockedError);
    expect(err.message).toBe('could not take the push lock for profile "default"');
    expect((err as PushLockedError).hint).toBe(`if no push is running, delete ${path}`);
    expect(readFileSync(path, 'utf8')).toBe(stale);
    expect(existsSync(`${path}.takeover`)).toBe(true);
    // A takeover left behind by a run that died in the middle of it is cleared, and the lock taken.
    age(`${path}.takeover`);
    const lock = PushLock.acquire(dir, 'default', 'customers batch', now);
    expect(existsSync(`${path}.takeover`)).toBe(false);
    expect(JSON.parse(readFileSync(path, 'utf8')).pid).toBe(process.pid);
    lock.release();
  });
});

describe('releasing the lock', () => {
  it('leaves a lock that another run now holds', () => {
    const dir = fresh();
    const lock = PushLock.acquire(dir, 'default', 'customers batch', now);
    const owner = JSON.parse(readFileSync(lock.path, 'utf8')) as LockOwner;
    for (const other of [
      { ...owner, started: '2026-11-21T00:00:00.000Z' },
      { ...owner, pid: owner.pid + 1 },
      { ...owner, host: 'elsewhere.example' },
    ]) {
      writeFileSync(lock.path, JSON.stringify(other));
      lock.release();
      expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toEqual(other);
    }
    writeFileSync(lock.path, 'garbage');
    lock.release();
    expect(readFileSync(lock.path, 'utf8')).toBe('garbage');
  });

  it('is harmless when the lock is gone already', () => {
    const dir = fresh();
    const lock = PushLock.acquire(dir, 'default', 'customers batch', now);
    rmSync(lock.path);
    expect(() => lock.release()).not.toThrow();
    expect(existsSync(lock.path)).toBe(false);
  });
});

describe('removeStale', () => {
  it('removes an unreadable lock only once it is old, and always clears its own guard', () => {
    const dir = fresh();
    const path = lockFile(dir);
    writeFileSync(path, 'garbage');
    removeStale(path, 'unreadable');
    expect(existsSync(path)).toBe(true);
    expect(existsSync(`${path}.takeover`)).toBe(false);
    age(path);
    removeStale(path, 'unreadable');
    expect(existsSync(path)).toBe(false);
    expect(existsSync(`${path}.takeover`)).toBe(false);
  });

  it('leaves a lock that became readable meanwhile, even when it is old', () => {
    const dir = fresh();
    const path = lockFile(dir);
    writeFileSync(path, JSON.stringify({ pid: 1, host: hostname(), started: 'x', command: 'x' }));
    age(path);
    removeStale(path, 'unreadable');
    expect(existsSync(path)).toBe(true);
  });

  it('removes a dead owner only while the lock still names it (pid, host and start)', () => {
    const dir = fresh();
    const path = lockFile(dir);
    const stale: LockOwner = { pid: deadPid(), host: hostname(), started: 'then', command: 'x' };
    for (const now of [
      { ...stale, started: 'later' },
      { ...stale, pid: stale.pid + 1 },
      { ...stale, host: 'other' },
    ]) {
      writeFileSync(path, JSON.stringify(now));
      removeStale(path, stale);
      expect(JSON.parse(readFileSync(path, 'utf8'))).toEqual(now);
    }
    writeFileSync(path, 'garbage');
    removeStale(path, stale);
    expect(existsSync(path)).toBe(true);
    writeFileSync(path, JSON.stringify({ ...stale, command: 'another command' }));
    removeStale(path, stale);
    expect(existsSync(path)).toBe(false);
  });

  it('leaves a recent guard of another run alone, and fails on a folder that is not there', () => {
    const dir = fresh();
    const path = lockFile(dir);
    writeFileSync(path, 'garbage');
    age(path);
    writeFileSync(`${path}.takeover`, '');
    removeStale(path, 'unreadable');
    expect(existsSync(path)).toBe(true);
    expect(existsSync(`${path}.takeover`)).toBe(true);
    expect(() => removeStale(join(dir, 'nowhere', 'x.lock'), 'unreadable')).toThrow(/ENOENT/);
  });
});
