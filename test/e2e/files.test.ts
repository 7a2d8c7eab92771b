import { execFileSync, spawn } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, errorLines, runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { scratchDir } from '../helpers/scratch.js';
import { makeCharDevice, mountTinyFs, reportSkipped } from '../helpers/tiny-fs.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';
import { MAPPING, pushEnv } from './push-helpers.js';

/**
 * What leadctl writes, on hostile or broken ground, through the built binary: links planted in the
 * folder, /dev/null and FIFOs as the rejects file, a disk that fills after the service stored
 * customers, a full staging folder, a corrupt delta record and journal.
 */

const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-files-'));
const exportDir = join(work, 'export');
/**
 * 500 good customers (sorted, so the push streams and sends as it reads), then 500 with a bad
 * payment amount: rejects of about 100 KB, more than the 64 KiB disks below hold.
 */
const GOOD = 500;
const BAD = 500;
let sandbox: TestSandbox;

beforeAll(async () => {
  await writeExport({ out: exportDir, customers: GOOD, seed: 9, paymentsPerCustomer: 2, shapes: ['denormalised'] });
  let bad = '';
  for (let i = 0; i < BAD; i++)
    bad += `${9_000_001 + i},LN-9${i},,Y,N,LOC,ORIG,$250.00,$245.00,12/3/2025,11/19/2025 11:03 AM,11/19/2025 12:03 PM,,11/19/2025 1:03 PM,T9${i},not-money,FIRST,WU,PAID,$218.24,$93.53,$0.00,,,,,12/3/2025 4:31 PM\n`;
  appendFileSync(join(exportDir, 'export.csv'), bad);
  sandbox = await startSandboxProcess();
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

let serial = 0;
const folder = () => {
  const dir = join(work, `case-${serial++}`);
  mkdirSync(dir);
  return dir;
};
const check = (rejects: string, extra: string[] = []) =>
  runBinary(
    ['customers', 'batch', 'export.csv', '--mapping', MAPPING, '--validate-only', '--rejects', rejects, ...extra],
    { cwd: exportDir, env: { HOME: work } },
  );
const batchRequests = async () =>
  ((await sandbox.stats()) as any).requests.by_route['POST /api/v1/loan-performance/batches/customers'] ?? 0;

describe('the rejects file on hostile ground', () => {
  it('a link planted at the old NAME.partial is never followed; a link as the file itself is refused (exit 2)', async () => {
    const dir = folder();
    const victim = join(dir, 'victim');
    writeFileSync(victim, 'precious\n');
    symlinkSync(victim, join(dir, 'rejects.csv.partial'));
    const ok = await check(join(dir, 'rejects.csv'));
    expect(ok.code, ok.stderr).toBe(4);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(readFileSync(join(dir, 'rejects.csv'), 'utf8').trimEnd().split('\n')).toHaveLength(BAD + 1);
    expect(lstatSync(join(dir, 'rejects.csv.partial')).isSymbolicLink()).toBe(true);

    symlinkSync(victim, join(dir, 'link.csv'));
    const refused = await check(join(dir, 'link.csv'));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`the rejects file ${join(dir, 'link.csv')} is a symbolic link (to ${victim})`);
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(join(dir, 'link.csv')).isSymbolicLink()).toBe(true);
  });

  it('--rejects on a character device discards and leaves the device node in place: a private one first, then /dev/null', async () => {
    const dir = folder();
    const device = makeCharDevice(dir, 'null', 1, 3);
    if (typeof device === 'string') {
      const run = await check(device);
      expect(run.code, run.stderr).toBe(4);
      expect(lstatSync(device).isCharacterDevice()).toBe(true);
      expect(readdirSync(dir)).toEqual(['null']);
    } else {
      reportSkipped('--rejects on a private null device', device.skipped);
    }
    const before = lstatSync('/dev/null');
    const run = await check('/dev/null');
    expect(run.code, run.stderr).toBe(4);
    const after = lstatSync('/dev/null');
    expect(after.isCharacterDevice()).toBe(true);
    expect([after.ino, after.rdev]).toEqual([before.ino, before.rdev]);
    expect(readdirSync('/dev').filter((n) => n.startsWith('null.'))).toEqual([]);
  });

  it('--rejects /dev/full fails with ENOSPC (exit 2), naming the file', async () => {
    const run = await check('/dev/full');
    expect(run.code).toBe(2);
    expect(errorLines(run.stderr)).toContain('Error: the rejects file /dev/full: no space left on the device (ENOSPC)');
    expect(lstatSync('/dev/full').isCharacterDevice()).toBe(true);
  });

  it('--rejects on a FIFO writes to its reader and leaves the FIFO; a FIFO nothing reads fails at once', async () => {
    const dir = folder();
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const alone = await check(fifo);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain('is a FIFO (named pipe) that nothing reads');
    const reader = spawn('cat', [fifo], { stdio: ['ignore', 'pipe', 'inherit'] });
    let received = '';
    reader.stdout.setEncoding('utf8').on('data', (d: string) => (received += d));
    const closed = new Promise((resolve) => reader.on('close', resolve));
    // cat opens the FIFO as soon as it starts; give it the moment it needs.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const run = await check(fifo);
    await closed;
    expect(run.code, run.stderr).toBe(4);
    expect(received.trimEnd().split('\n')).toHaveLength(BAD + 1);
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });
});

describe('a full disk', () => {
  it('filling while the rejects are written after the service stored customers: summary, exit 2, no partial file, and --resume finishes', async () => {
    const tiny = mountTinyFs(work, 'full');
    if ('skipped' in tiny) {
      reportSkipped('a disk that fills during a push', tiny.skipped);
      expect(typeof tiny.skipped).toBe('string');
      return;
    }
    try {
      const env = pushEnv(sandbox);
      const before = (await sandbox.stats()).customers;
      const rejects = join(tiny.dir, 'rejects.csv');
      // Chunks of 100: requests go (and are stored) while the bad rows further on are still to come.
      const args = ['customers', 'batch', 'export.csv', '--mapping', MAPPING, '--chunk-size', '100', '-o', 'json'];
      const run = await runBinary([...args, '--rejects', rejects], { env, cwd: exportDir });
      expect(run.code, run.stderr).toBe(2);
      const summary = JSON.parse(run.stdout);
      expect(summary).toMatchObject({ status: 'failed', exit_code: 2, rejects_file: null });
      expect(summary.error).toMatchObject({
        code: 'environment',
        message: `the rejects file ${rejects}: no space left on the device (ENOSPC)`,
      });
      const stored = (await sandbox.stats()).customers - before;
      expect(stored).toBeGreaterThan(0);
      expect(summary.customers.accepted).toBe(stored);
      expect(summary.requests.sent).toBeGreaterThan(0);
      expect(run.stderr).toContain(`Error: the rejects file ${rejects}: no space left on the device (ENOSPC)`);
      expect(run.stderr).toMatch(/Hint: free space .*; then rerun the same command with --resume/);
      expect(readdirSync(tiny.dir)).toEqual([]);

      // Room again (another folder): the resume sends the rest and writes every reject.
      const roomy = join(folder(), 'rejects.csv');
      const resumed = await runBinary([...args, '--rejects', roomy, '--resume'], { env, cwd: exportDir });
      expect(resumed.code, resumed.stderr).toBe(4);
      const done = JSON.parse(resumed.stdout);
      expect(done.requests.acknowledged_before).toBe(summary.requests.sent);
      expect(done.customers).toMatchObject({ not_sent: 0 });
      expect(readFileSync(roomy, 'utf8').trimEnd().split('\n')).toHaveLength(BAD + 1);
      expect((await sandbox.stats()).customers - before).toBe(GOOD + BAD);
    } finally {
      tiny.unmount();
    }
  });

  it('a full staging folder names the folder and LEADCTL_TMPDIR, exits 2, sends nothing and does not suggest --resume', async () => {
    const tiny = mountTinyFs(work, 'staging');
    if ('skipped' in tiny) {
      reportSkipped('a full staging folder', tiny.skipped);
      expect(typeof tiny.skipped).toBe('string');
      return;
    }
    try {
      const requestsBefore = await batchRequests();
      const env = { ...pushEnv(sandbox), LEADCTL_TMPDIR: tiny.dir };
      // Two inputs that are not a --loans/--payments pair: staged.
      const run = await runBinary(['customers', 'batch', 'export.csv', 'export.csv', '--mapping', MAPPING], {
        env,
        cwd: exportDir,
      });
      expect(run.code, run.stderr).toBe(2);
      expect(errorLines(run.stderr)).toContain(`Error: the staging folder ${tiny.dir}: no space left on the device`);
      expect(errorLines(run.stderr)).toMatch(/Hint: .*LEADCTL_TMPDIR/);
      expect(errorLines(run.stderr)).not.toContain('--resume');
      expect(errorLines(run.stderr)).not.toContain('unexpected');
      expect(await batchRequests()).toBe(requestsBefore);
      expect(readdirSync(tiny.dir)).toEqual([]);
    } finally {
      tiny.unmount();
    }
  });
});

describe('lists on a full disk', () => {
  it('lists create --skip-invalid whose rejects fill the disk: exit 2 before anything is uploaded, no partial file', async () => {
    const tiny = mountTinyFs(work, 'lists');
    if ('skipped' in tiny) {
      reportSkipped('a list whose rejects fill the disk', tiny.skipped);
      expect(typeof tiny.skipped).toBe('string');
      return;
    }
    try {
      const dir = folder();
      const rows = ['ssn'];
      for (let i = 0; i < 3000; i++)
        rows.push(i % 2 ? String(100_000_000 + i * 7) : `not-an-ssn-${'x'.repeat(40)}-${i}`);
      writeFileSync(join(dir, 'ssns.csv'), rows.join('\n') + '\n');
      const listsBefore = (await sandbox.stats()).lists;
      const rejects = join(tiny.dir, 'rejects.csv');
      const run = await runBinary(
        ['lists', 'create', '--name', 'Full', '--type', 'ssn', 'ssns.csv', '--skip-invalid', '--rejects', rejects],
        { env: pushEnv(sandbox), cwd: dir },
      );
      expect(run.code, run.stderr).toBe(2);
      expect(errorLines(run.stderr)).toContain(
        `Error: the rejects file ${rejects}: no space left on the device (ENOSPC)`,
      );
      expect(errorLines(run.stderr)).not.toContain('unexpected');
      expect((await sandbox.stats()).lists).toBe(listsBefore);
      expect(readdirSync(tiny.dir)).toEqual([]);
    } finally {
      tiny.unmount();
    }
  });
});

describe('a file size limit (ulimit -f)', () => {
  it.runIf(process.platform === 'linux')(
    'a rejects file over the limit is EFBIG (exit 2, named, no partial file), not a kill by SIGXFSZ',
    async () => {
      const dir = folder();
      const rows = ['ssn'];
      for (let i = 0; i < 3000; i++) rows.push(i % 2 ? String(100_000_000 + i * 7) : `not-an-ssn-${i}`);
      writeFileSync(join(dir, 'ssns.csv'), rows.join('\n') + '\n');
      // The limit is the shell's, applied to leadctl alone (8 blocks: a few KB; the rejects are ~60 KB).
      const run = await new Promise<{ code: number | null; signal: string | null; stderr: string }>((resolve) => {
        const child = spawn(
          'sh',
          [
            '-c',
            'ulimit -f 8 && exec "$0" "$@"',
            process.execPath,
            BIN,
            'lists',
            'create',
            '--name',
            'x',
            '--type',
            'ssn',
            '--validate-only',
            'ssns.csv',
            '--rejects',
            'rejects.csv',
          ],
          {
            cwd: dir,
            stdio: ['ignore', 'ignore', 'pipe'],
            // A compile cache of its own, empty (the most there is to write under the limit), so
            // that the cut-short cache files it may write never reach the shared one.
            env: { ...process.env, NO_COLOR: '1', NODE_COMPILE_CACHE: scratchDir('leadctl-compile-cache-') },
          },
        );
        let stderr = '';
        child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        child.on('close', (code, signal) => resolve({ code, signal, stderr }));
      });
      expect(run.signal, run.stderr).toBeNull();
      expect(run.code, run.stderr).toBe(2);
      expect(errorLines(run.stderr)).toContain(
        `Error: the rejects file ${join(dir, 'rejects.csv')}: the file is larger than a file may be here (EFBIG)`,
      );
      expect(readdirSync(dir)).toEqual(['ssns.csv']);
    },
  );
});

describe('corrupt state', () => {
  it('a corrupt delta record is set aside with a warning naming both paths; that run sends everything, the next sends nothing', async () => {
    const dir = folder();
    writeFileSync(
      join(dir, 'small.csv'),
      readFileSync(join(exportDir, 'export.csv'), 'utf8').split('\n').slice(0, 301).join('\n') + '\n',
    );
    const env = pushEnv(sandbox);
    const args = ['customers', 'batch', 'small.csv', '--mapping', MAPPING, '--changed-only', '-o', 'json'];
    const first = await runBinary(args, { env, cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const customers = JSON.parse(first.stdout).customers.sent as number;
    expect(customers).toBeGreaterThan(100);
    const records = join(env.LEADCTL_STATE_DIR!, 'records');
    const [name] = readdirSync(records).filter((n) => n.endsWith('.sqlite'));
    const record = join(records, name!);

    for (const corruption of ['header', 'pages'] as const) {
      const bytes = readFileSync(record);
      if (corruption === 'header')
        bytes.fill(0x47, 0, 100); // "file is not a database"
      else for (let i = 4096; i < bytes.length; i += 97) bytes[i] = 0xab; // "database disk image is malformed"
      writeFileSync(record, bytes);
      const again = await runBinary(args, { env, cwd: dir });
      expect(again.code, again.stderr).toBe(0);
      const aside = readdirSync(records).filter((n) => n.includes('.corrupt-'));
      expect(aside.length).toBeGreaterThan(0);
      const newest = join(records, aside.sort().at(-1)!);
      expect(again.stderr).toContain(`Warning: the delta record ${record} is corrupt (`);
      expect(again.stderr).toContain(`set aside as ${newest}`);
      expect(again.stderr).toMatch(corruption === 'header' ? /file is not a database/ : /malformed/);
      expect(JSON.parse(again.stdout).customers).toMatchObject({ sent: customers, unchanged: 0 });
      const third = await runBinary(args, { env, cwd: dir });
      expect(third.code, third.stderr).toBe(0);
      expect(third.stderr).not.toContain('corrupt');
      expect(JSON.parse(third.stdout).customers).toMatchObject({ sent: 0, unchanged: customers });
      // two seconds apart at least in name: the second corruption gets its own file
      if (corruption === 'header') await new Promise((resolve) => setTimeout(resolve, 1100));
    }
    expect(readdirSync(records).filter((n) => n.includes('.corrupt-'))).toHaveLength(2);
  });

  it('a journal edited into lines that are no entries resumes as if absent (set aside, everything sent), never exit 1', async () => {
    const dir = folder();
    writeFileSync(
      join(dir, 'small.csv'),
      readFileSync(join(exportDir, 'export.csv'), 'utf8').split('\n').slice(0, 201).join('\n') + '\n',
    );
    const env = pushEnv(sandbox);
    const args = ['customers', 'batch', 'small.csv', '--mapping', MAPPING, '-o', 'json'];
    const first = await runBinary(args, { env, cwd: dir });
    expect(first.code, first.stderr).toBe(0);
    const journal = JSON.parse(first.stdout).journal as string;
    writeFileSync(journal, 'null\n42\n{"type":"ack"}\n{"type":"header"}\n');
    const resumed = await runBinary([...args, '--resume'], { env, cwd: dir });
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`the journal ${journal} is corrupt or was edited`);
    expect(existsSync(journal)).toBe(true);
    expect(readdirSync(join(journal, '..')).some((n) => n.includes('.corrupt-'))).toBe(true);
    const summary = JSON.parse(resumed.stdout);
    expect(summary.requests.acknowledged_before).toBe(0);
    expect(summary.customers.sent).toBe(JSON.parse(first.stdout).customers.sent);
  });
});
