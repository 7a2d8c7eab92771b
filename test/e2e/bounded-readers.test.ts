import { execFileSync, spawn } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, errorLines, stderrDocument } from '../helpers/binary.js';

/**
 * Every reader is bounded and answers signals, through the built binary: a FIFO nobody writes to
 * (the run waits, and SIGTERM or SIGINT ends it with 143/130 and a message, no stack trace), a
 * 200 MB file with no line break and /dev/zero (refused at the record limit, exit 2, naming row
 * and limit, with peak RSS under 300 MB), a 200 MB file named as a secret or a mapping (refused,
 * naming the file, never read whole).
 */

const posix = process.platform !== 'win32';
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-bounded-'));
// Preloaded into each run: writes its peak RSS (KiB, getrusage) to the file named in the environment.
const RSS_HOOK = join(work, 'peak-rss.cjs');
writeFileSync(
  RSS_HOOK,
  `process.on('exit', () => { try { require('node:fs').writeFileSync(process.env.RSS_FILE, String(process.resourceUsage().maxRSS)); } catch {} });\n`,
);
const BIG = join(work, 'no-line-break.txt');
const MB = 1024 * 1024;

beforeAll(() => {
  const fd = openSync(BIG, 'w');
  const block = Buffer.alloc(MB, '7');
  for (let i = 0; i < 200; i++) writeSync(fd, block);
  closeSync(fd);
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

let runs = 0;

interface Run {
  pid: number;
  ended: Promise<{
    code: number | null;
    signal: NodeJS.Signals | null;
    stdout: string;
    stderr: string;
    peakRssMb: number;
  }>;
  kill(signal: NodeJS.Signals): number;
}

function start(args: string[]): Run {
  const rssFile = join(work, `rss-${++runs}`);
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) base[k] = v;
  const child = spawn(process.execPath, ['-r', RSS_HOOK, BIN, ...args], {
    cwd: work,
    env: {
      ...base,
      NO_COLOR: '1',
      RSS_FILE: rssFile,
      HOME: work,
      LEADCTL_CONFIG_DIR: join(work, 'config'),
      LEADCTL_STATE_DIR: join(work, 'state'),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const guard = setTimeout(() => child.kill('SIGKILL'), 60_000);
  const ended = new Promise<Awaited<Run['ended']>>((resolve) =>
    child.on('close', (code, signal) => {
      clearTimeout(guard);
      const peakRssMb = existsSync(rssFile) ? Number(readFileSync(rssFile, 'utf8')) / 1024 : Number.NaN;
      resolve({ code, signal, stdout, stderr, peakRssMb });
    }),
  );
  return { pid: child.pid!, ended, kill: (signal) => Number(child.kill(signal)) };
}

/** Waits until the process has `path` open (it is then waiting on it), or a while where /proc is not there. */
async function waitUntilOpen(pid: number, path: string): Promise<void> {
  const fds = `/proc/${pid}/fd`;
  const until = Date.now() + 30_000;
  while (Date.now() < until) {
    if (!existsSync(fds)) return new Promise((resolve) => setTimeout(resolve, 2_000));
    try {
      if (readdirSync(fds).some((fd) => safeReadlink(join(fds, fd)) === path)) return;
    } catch {
      // the process is between states: look again
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`process ${pid} never opened ${path}`);
}

function safeReadlink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function fifo(name: string): string {
  const path = join(work, name);
  execFileSync('mkfifo', [path]);
  return path;
}

/** Sends `signal` once the run waits on `path`; resolves to how the run ended and how long that took. */
async function stopWhileWaiting(run: Run, path: string, signal: NodeJS.Signals) {
  await waitUntilOpen(run.pid, path);
  // A moment more: the open is done, the read is waiting.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const sent = performance.now();
  run.kill(signal);
  const end = await run.ended;
  return { ...end, seconds: (performance.now() - sent) / 1000 };
}

const STACK_TRACE = /^\s+at .+[:(]\d+/m;

describe.runIf(posix)('a FIFO nobody writes to', () => {
  it('lists create: SIGTERM ends the wait at once, exit 143, a message and no stack trace', async () => {
    const path = fifo('values.fifo');
    const end = await stopWhileWaiting(
      start(['lists', 'create', '--name', 'x', '--type', 'ssn', '--validate-only', path]),
      path,
      'SIGTERM',
    );
    expect(end.code, end.stderr).toBe(143);
    // Generous bound for a loaded machine: before, it never ended.
    expect(end.seconds).toBeLessThan(5);
    expect(errorLines(end.stderr)).toContain('Error: interrupted by SIGTERM');
    expect(errorLines(end.stderr)).not.toMatch(STACK_TRACE);
  });

  it('lists create: SIGINT likewise, exit 130', async () => {
    const path = fifo('values-int.fifo');
    const end = await stopWhileWaiting(
      start(['lists', 'create', '--name', 'x', '--type', 'ssn', '--validate-only', path]),
      path,
      'SIGINT',
    );
    expect(end.code, end.stderr).toBe(130);
    expect(end.seconds).toBeLessThan(5);
    expect(end.stderr).not.toMatch(STACK_TRACE);
  });

  it('customers batch: SIGTERM while it waits ends with the summary (interrupted), exit 143', async () => {
    const path = fifo('export.csv');
    const end = await stopWhileWaiting(
      start(['customers', 'batch', '--validate-only', '-o', 'json', path]),
      path,
      'SIGTERM',
    );
    expect(end.code, end.stderr).toBe(143);
    expect(end.seconds).toBeLessThan(5);
    expect(JSON.parse(end.stdout)).toMatchObject({ status: 'interrupted', exit_code: 143 });
    expect(end.stderr).not.toMatch(STACK_TRACE);
  });

  it('dry-run --file and a --mapping FIFO: SIGTERM ends them too', async () => {
    for (const args of [
      (p: string) => ['dry-run', '--file', p],
      (p: string) => ['customers', 'batch', '--validate-only', '--mapping', p, 'export.csv'],
    ]) {
      const path = fifo(`other-${runs}.fifo`);
      const end = await stopWhileWaiting(start(args(path)), path, 'SIGTERM');
      // Commands that trap no signal end the usual way: by the signal itself (a shell says 143).
      expect(end.code === 143 || end.signal === 'SIGTERM', `${end.code} ${end.signal} ${end.stderr}`).toBe(true);
      expect(end.seconds).toBeLessThan(5);
      expect(end.stderr).not.toMatch(STACK_TRACE);
    }
  });
});

describe('a 200 MB file with no line break, and endless input', () => {
  it('lists create refuses it at the record limit: exit 2, naming row and limit, in bounded memory', async () => {
    const end = await start(['lists', 'create', '--name', 'x', '--type', 'ssn', '--validate-only', BIG]).ended;
    expect(end.code, end.stderr).toBe(2);
    expect(stderrDocument(end.stderr).error.message).toBe(
      `${BIG}, row 1, column 1: the row is longer than 4 MiB of text, with no line break yet`,
    );
    expect(end.stderr).not.toMatch(STACK_TRACE);
    expect(end.peakRssMb).toBeLessThan(300);
  });

  it('customers batch and dry-run --file likewise', async () => {
    for (const args of [
      ['customers', 'batch', '--validate-only', '--format', 'csv', BIG],
      ['customers', 'batch', '--validate-only', '--format', 'ndjson', BIG],
      ['dry-run', '--file', BIG],
    ]) {
      const end = await start(args).ended;
      expect(end.code, `${args.join(' ')}: ${end.stderr}`).toBe(2);
      expect(end.stderr).toMatch(/row 1.*longer than 4 MiB of text/);
      expect(end.peakRssMb).toBeLessThan(300);
    }
  });

  it.runIf(posix && existsSync('/dev/zero'))(
    'lists create stops reading /dev/zero at once: a NUL byte is no text',
    async () => {
      const end = await start(['lists', 'create', '--name', 'x', '--type', 'ssn', '--validate-only', '/dev/zero'])
        .ended;
      expect(end.code, end.stderr).toBe(2);
      expect(end.stderr).toContain('/dev/zero: contains a NUL byte (line 1)');
      expect(end.peakRssMb).toBeLessThan(300);
    },
  );

  it('as a client secret file or a mapping it is refused by its size, naming the file, never read or sent', async () => {
    const secret = await start([
      'auth',
      'login',
      '--client-id',
      'someone',
      '--client-secret-file',
      BIG,
      '--base-url',
      'http://127.0.0.1:9',
    ]).ended;
    expect(secret.code, secret.stderr).toBe(2);
    expect(secret.stderr).toContain(
      `the client secret file ${BIG} is 209,715,200 bytes; a secret file holds at most 64 KiB`,
    );
    expect(secret.stderr).not.toContain('7777777');
    expect(secret.peakRssMb).toBeLessThan(300);
    const mapping = await start(['customers', 'batch', '--validate-only', '--mapping', BIG, 'export.csv']).ended;
    expect(mapping.code, mapping.stderr).toBe(2);
    expect(mapping.stderr).toContain(`${BIG}: is 209,715,200 bytes: a mapping file is at most 1 MiB`);
  });
});
