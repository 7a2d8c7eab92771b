import { execFileSync, spawn } from 'node:child_process';
import {
  constants,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { EnvironmentError, environmentError, ExitCode, type LeadctlError, UsageError } from '../../../src/errors.js';
import { CsvStream, exportToFile } from '../../../src/ingest/table/writer.js';
import {
  isTemporaryOf,
  SafeFile,
  TEMPORARY_FLAGS,
  temporaryName,
  writeFileSafely,
  writeStreamSafely,
} from '../../../src/io/safe-file.js';
import { makeCharDevice, mountTinyFs, reportSkipped } from '../../helpers/tiny-fs.js';

// The random part of temporary names, taken from a queue when a test fills it (to plant a link at
// the very name leadctl will pick), else from the real generator.
const planned: Buffer[] = [];
vi.mock('node:crypto', async (original) => {
  const real = await original<typeof import('node:crypto')>();
  return {
    ...real,
    randomBytes: (size: number) => planned.shift() ?? real.randomBytes(size),
  };
});

const work = mkdtempSync(join(tmpdir(), 'leadctl-safe-file-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
let serial = 0;
const folder = () => {
  const dir = join(work, `case-${serial++}`);
  mkdirSync(dir);
  return dir;
};
const partials = (dir: string) => readdirSync(dir).filter((n) => n.endsWith('.partial'));

function thrown(run: () => unknown): unknown {
  try {
    run();
  } catch (err) {
    return err;
  }
  throw new Error('expected an error');
}

describe('safe files: regular targets', () => {
  it('creates the temporary file exclusively, never through a link, 0600 whatever the umask, beside the target', () => {
    expect(TEMPORARY_FLAGS & constants.O_EXCL).toBe(constants.O_EXCL);
    expect(TEMPORARY_FLAGS & constants.O_CREAT).toBe(constants.O_CREAT);
    expect(TEMPORARY_FLAGS & constants.O_NOFOLLOW).toBe(constants.O_NOFOLLOW);
    expect(TEMPORARY_FLAGS & constants.O_TRUNC).toBe(0);
    const dir = folder();
    const target = join(dir, 'out.csv');
    const before = process.umask(0);
    try {
      const file = SafeFile.open(target);
      expect(file.temporary && isTemporaryOf(target, file.temporary.slice(dir.length + 1))).toBe(true);
      expect(statSync(file.temporary!).mode & 0o777).toBe(0o600);
      file.write('a,b\n');
      expect(existsSync(target)).toBe(false);
      file.commit();
    } finally {
      process.umask(before);
    }
    expect(readFileSync(target, 'utf8')).toBe('a,b\n');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(partials(dir)).toEqual([]);
  });

  it('picks a name nobody can predict (12 random hex digits), different every time', () => {
    const target = join(work, 'x.csv');
    const names = new Set(Array.from({ length: 50 }, () => temporaryName(target)));
    expect(names.size).toBe(50);
    for (const name of names) expect(name).toMatch(/\/x\.csv\.[0-9a-f]{12}\.partial$/);
  });

  it('never follows a link planted at the old predictable NAME.partial', () => {
    const dir = folder();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(dir, 'out.csv.partial'));
    writeFileSafely(join(dir, 'out.csv'), 'new\n');
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readFileSync(join(dir, 'out.csv'), 'utf8')).toBe('new\n');
  });

  it('never follows a link planted at the very temporary name it draws: it takes another', () => {
    const dir = folder();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    const target = join(dir, 'out.csv');
    const guessed = Buffer.from('0123456789ab', 'hex');
    // A link (and a dangling one, which O_CREAT alone would create the file through) at the names drawn first.
    symlinkSync(victim, `${target}.${guessed.toString('hex')}.partial`);
    const dangling = Buffer.from('ba9876543210', 'hex');
    symlinkSync(join(dir, 'created-through-link'), `${target}.${dangling.toString('hex')}.partial`);
    planned.push(guessed, dangling);
    writeFileSafely(target, 'new\n');
    expect(planned).toEqual([]);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(existsSync(join(dir, 'created-through-link'))).toBe(false);
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    // The primitive itself: the exclusive creation refuses a link at the name (EEXIST), whatever it points to.
    expect(
      (
        thrown(() =>
          openSync(`${target}.${guessed.toString('hex')}.partial`, TEMPORARY_FLAGS, 0o600),
        ) as NodeJS.ErrnoException
      ).code,
    ).toBe('EEXIST');
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
  });

  it('refuses a target that is a link (exit 2, naming where it points), dangling or not; the file it points to is untouched', () => {
    const dir = folder();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(dir, 'link.csv'));
    symlinkSync(join(dir, 'nowhere'), join(dir, 'dangling.csv'));
    for (const name of ['link.csv', 'dangling.csv']) {
      const err = thrown(() => writeFileSafely(join(dir, name), 'x', { what: 'the rejects file' }));
      expect(err).toBeInstanceOf(UsageError);
      expect((err as LeadctlError).exitCode).toBe(ExitCode.USAGE);
      expect((err as Error).message).toMatch(new RegExp(`the rejects file .*${name} is a symbolic link \\(to `));
    }
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(existsSync(join(dir, 'nowhere'))).toBe(false);
    expect(partials(dir)).toEqual([]);
  });

  it('replaces an existing file by renaming, so another name for the old file keeps its content', () => {
    const dir = folder();
    const target = join(dir, 'out.csv');
    writeFileSync(target, 'old\n');
    linkSync(target, join(dir, 'hard-link'));
    writeFileSafely(target, 'new\n');
    expect(readFileSync(target, 'utf8')).toBe('new\n');
    expect(readFileSync(join(dir, 'hard-link'), 'utf8')).toBe('old\n');
  });

  it('refuses a directory, a socket, and names a missing folder', async () => {
    const dir = folder();
    mkdirSync(join(dir, 'sub'));
    expect(() => SafeFile.open(join(dir, 'sub'))).toThrow(/is a directory/);
    const socket = join(dir, 'sock');
    const server = createServer().listen(socket);
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      expect(() => SafeFile.open(socket)).toThrow(/is a socket/);
    } finally {
      server.close();
    }
    expect(() => SafeFile.open(join(dir, 'no', 'such.csv'), { what: '--out' })).toThrow(
      /cannot write --out .*no\/such\.csv: its folder does not exist/,
    );
  });

  it('discard removes the temporary file and leaves the target as it was', () => {
    const dir = folder();
    const target = join(dir, 'out.csv');
    writeFileSync(target, 'old\n');
    const file = SafeFile.open(target);
    file.write('half');
    file.discard();
    file.discard();
    expect(readFileSync(target, 'utf8')).toBe('old\n');
    expect(partials(dir)).toEqual([]);
  });
});

describe('safe files: devices and FIFOs are written in place, never replaced', () => {
  it('a character device (a null device made with mknod) discards and stays the same device', () => {
    const dir = folder();
    const device = makeCharDevice(dir, 'null', 1, 3);
    if (typeof device !== 'string') {
      reportSkipped('writing to a private null device', device.skipped);
      expect(typeof device.skipped).toBe('string');
      return;
    }
    const before = lstatSync(device);
    writeFileSafely(device, 'a,b\n'.repeat(1000));
    const after = lstatSync(device);
    expect(after.isCharacterDevice()).toBe(true);
    expect([after.ino, after.rdev]).toEqual([before.ino, before.rdev]);
    expect(readdirSync(dir)).toEqual(['null']);
  });

  it('/dev/null itself (proven above on a private copy): written in place, still the same character device', () => {
    const before = lstatSync('/dev/null');
    const file = SafeFile.open('/dev/null');
    expect(file.inPlace).toBe(true);
    file.write('discarded\n');
    file.commit();
    const after = lstatSync('/dev/null');
    expect(after.isCharacterDevice()).toBe(true);
    expect([after.ino, after.rdev, after.mode]).toEqual([before.ino, before.rdev, before.mode]);
  });

  it('/dev/full fails with ENOSPC as an EnvironmentError (exit 2) naming the file', () => {
    const file = SafeFile.open('/dev/full', { what: 'the rejects file' });
    const err = thrown(() => file.write('x\n'));
    file.discard();
    expect(err).toBeInstanceOf(EnvironmentError);
    expect(err).toMatchObject({ exitCode: ExitCode.USAGE, errno: 'ENOSPC', path: '/dev/full' });
    expect((err as Error).message).toBe('the rejects file /dev/full: no space left on the device (ENOSPC)');
    expect(lstatSync('/dev/full').isCharacterDevice()).toBe(true);
  });

  it('a stream onto /dev/full fails with ENOSPC instead of waiting for a drain that never comes', async () => {
    const started = Date.now();
    const err = await exportToFile('/dev/full', async (out) => {
      const csv = new CsvStream(out, ['a']);
      for (let i = 0; i < 100_000; i++) await csv.write(['x'.repeat(100)]);
      await csv.end();
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnvironmentError);
    expect((err as Error).message).toBe('--out /dev/full: no space left on the device (ENOSPC)');
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('a FIFO is written in place for its reader and stays a FIFO', async () => {
    const dir = folder();
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    let received = '';
    reader.stdout.setEncoding('utf8').on('data', (d: string) => (received += d));
    const done = new Promise((resolve) => reader.on('close', resolve));
    // The reader opens the FIFO when it gets to it: until then, opening for writing says nothing reads it.
    let file: SafeFile | undefined;
    for (let i = 0; i < 500 && !file; i++) {
      try {
        file = SafeFile.open(fifo);
      } catch (err) {
        expect((err as EnvironmentError).errno).toBe('ENXIO');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    }
    expect(file?.inPlace).toBe(true);
    const text = 'row,value\n'.repeat(20_000); // more than a pipe holds: the writes wait for the reader
    file!.write(text);
    file!.commit();
    await done;
    expect(received).toBe(text);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    expect(readdirSync(dir)).toEqual(['pipe']);
  });

  it('a FIFO nothing reads fails at once (exit 2), rather than blocking deaf to signals', () => {
    const dir = folder();
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const err = thrown(() => SafeFile.open(fifo, { what: 'the rejects file' }));
    expect(err).toBeInstanceOf(EnvironmentError);
    expect((err as Error).message).toMatch(/the rejects file .*pipe is a FIFO \(named pipe\) that nothing reads/);
  });
});

describe('safe files on a full disk', () => {
  it('ENOSPC while writing or flushing is an EnvironmentError naming the target, and leaves no temporary file', async () => {
    const tiny = mountTinyFs(work, 'tiny');
    if ('skipped' in tiny) {
      reportSkipped('a full tmpfs', tiny.skipped);
      expect(typeof tiny.skipped).toBe('string');
      return;
    }
    try {
      const target = join(tiny.dir, 'rejects.csv');
      const err = thrown(() => writeFileSafely(target, Buffer.alloc(256 * 1024, 0x61), { what: 'the rejects file' }));
      expect(err).toBeInstanceOf(EnvironmentError);
      expect(err).toMatchObject({ errno: 'ENOSPC', path: target, exitCode: 2 });
      expect(readdirSync(tiny.dir)).toEqual([]);
      const streamed = await writeStreamSafely(
        join(tiny.dir, 'export.csv'),
        async (out) => {
          const csv = new CsvStream(out, ['a']);
          for (let i = 0; i < 10_000; i++) await csv.write(['y'.repeat(100)]);
        },
        { what: '--out' },
      ).catch((e: unknown) => e);
      expect(streamed).toBeInstanceOf(EnvironmentError);
      expect((streamed as Error).message).toBe(
        `--out ${join(tiny.dir, 'export.csv')}: no space left on the device (ENOSPC)`,
      );
      expect(readdirSync(tiny.dir)).toEqual([]);
    } finally {
      tiny.unmount();
    }
  });
});

describe('environmentError: the one mapping of system errors', () => {
  it('maps ENOSPC, EDQUOT, EACCES, EROFS and SQLite FULL/READONLY/IOERR to exit 2 with the path; leaves the rest alone', () => {
    const errno = (code: string, path?: string) => Object.assign(new Error(`${code}: x`), { code, path });
    for (const code of ['ENOSPC', 'EDQUOT', 'EACCES', 'EPERM', 'EROFS', 'EIO']) {
      const mapped = environmentError(errno(code, '/var/x'));
      expect(mapped).toBeInstanceOf(EnvironmentError);
      expect(mapped).toMatchObject({ exitCode: 2, errno: code, path: '/var/x' });
      expect(mapped!.message).toMatch(new RegExp(`^/var/x: .*\\(${code}\\)$`));
      expect(mapped!.hint).toBeTruthy();
    }
    expect(environmentError(errno('SQLITE_FULL'), '/tmp/s', 'the staging folder')!.message).toBe(
      'the staging folder /tmp/s: no space left on the device (the database is full) (SQLITE_FULL)',
    );
    expect(environmentError(errno('SQLITE_IOERR_WRITE'), '/d')).toMatchObject({ errno: 'SQLITE_IOERR_WRITE' });
    expect(environmentError(errno('SQLITE_READONLY_DBMOVED'), '/d')).toBeInstanceOf(EnvironmentError);
    for (const other of [errno('ENOENT', '/x'), errno('SQLITE_CORRUPT'), new TypeError('bug'), 'text', undefined])
      expect(environmentError(other)).toBeUndefined();
    expect(environmentError(new UsageError('mine'))).toBeUndefined();
  });

  it("a missing file or folder is the machine's doing only where the caller names the place it writes", () => {
    const errno = (code: string, path?: string) => Object.assign(new Error(`${code}: x`), { code, path });
    for (const code of ['ENOENT', 'ENOTDIR']) {
      const mapped = environmentError(
        errno(code, '/tmp/r/x.partial'),
        '/tmp/r/x.csv',
        'the rejects file',
        'free space',
      );
      expect(mapped).toMatchObject({ exitCode: 2, errno: code, path: '/tmp/r/x.csv' });
      expect(mapped!.message).toMatch(
        new RegExp(`^the rejects file /tmp/r/x\\.csv: .*while leadctl was writing there\\) \\(${code}\\)$`),
      );
      // Not the caller's hint about room: what to do about a folder that went away.
      expect(mapped!.hint).toMatch(/^make sure nothing else/);
      expect(environmentError(errno(code, '/tmp/r/x.csv'))).toBeUndefined();
    }
  });
});
