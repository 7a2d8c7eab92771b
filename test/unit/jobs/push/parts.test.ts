import {
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
  appendFileSync,
  existsSync,
  mkdirSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { Chunker, customersBody, type Chunk } from '../../../../src/jobs/push/chunker.js';
import { Journal, JOURNAL_KEEP_DAYS, journalKey } from '../../../../src/jobs/push/journal.js';
import { LOCKED_EXIT_CODE, PushLock, PushLockedError, removeStale } from '../../../../src/jobs/push/lock.js';
import { applySkips } from '../../../../src/jobs/push/service-skips.js';
import { stateDir } from '../../../../src/config/state-dir.js';
import type { CustomerTrace, ValidCustomer } from '../../../../src/jobs/push/validate.js';
import { ExitCode, LeadctlError, UsageError } from '../../../../src/errors.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-push-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function customer(id: string, size = 10): ValidCustomer {
  const json = JSON.stringify({ customer_id: id, loans: [{ loan_id: 'L', pad: 'x'.repeat(size) }] });
  return { customerId: id, json, loans: 1, payments: 0, trace: { customerId: id, src: 0, row: 1, loans: [] } };
}

function chunks(list: ValidCustomer[], maxCustomers: number, maxBytes: number): Chunk[] {
  const chunker = new Chunker({ maxCustomers, maxBytes });
  const out: Chunk[] = [];
  for (const c of list) {
    const closed = chunker.add(c);
    if (closed) out.push(closed);
  }
  const last = chunker.finish();
  if (last) out.push(last);
  return out;
}

describe('Chunker', () => {
  it('cuts at the customer limit', () => {
    const list = Array.from({ length: 2500 }, (_, i) => customer(`C${i}`));
    const result = chunks(list, 1000, 10 * 1024 * 1024);
    expect(result.map((c) => c.customers.length)).toEqual([1000, 1000, 500]);
    expect(result.map((c) => c.index)).toEqual([0, 1, 2]);
  });

  it('keeps every body within the byte budget, and reports its exact size', () => {
    const list = Array.from({ length: 50 }, (_, i) => customer(`C${i}`, 100 + (i % 7) * 40));
    const result = chunks(list, 1000, 1200);
    expect(result.length).toBeGreaterThan(5);
    for (const chunk of result) {
      const body = customersBody(chunk.customers);
      expect(Buffer.byteLength(body)).toBe(chunk.bytes);
      expect(chunk.bytes).toBeLessThanOrEqual(1200);
      expect(JSON.parse(body.toString('utf8')).customers).toHaveLength(chunk.customers.length);
    }
    expect(result.flatMap((c) => c.customers.map((x) => x.customerId))).toEqual(list.map((c) => c.customerId));
  });

  it('sends a customer larger than the budget alone', () => {
    const result = chunks([customer('A'), customer('BIG', 5000), customer('C')], 1000, 1000);
    expect(result.map((c) => c.customers.map((x) => x.customerId))).toEqual([['A'], ['BIG'], ['C']]);
  });

  it('is deterministic', () => {
    const list = Array.from({ length: 300 }, (_, i) => customer(`C${i}`, (i * 37) % 500));
    const a = chunks(list, 64, 8000).map((c) => customersBody(c.customers));
    const b = chunks(list, 64, 8000).map((c) => customersBody(c.customers));
    expect(b).toEqual(a);
  });
});

describe('Journal', () => {
  const header = (key: string, maxCustomers = 1000) => ({
    key,
    profile: 'default',
    base_url: 'http://127.0.0.1:1',
    inputs: ['auto:x.csv'],
    settings: { maxCustomers, maxBytes: 8 },
  });
  const now = new Date('2026-11-20T00:00:00Z');

  it('is keyed by content, profile, base URL and client', () => {
    const a = journalKey('d1', 'default', 'http://h/');
    expect(journalKey('d1', 'default', 'http://h')).toBe(a);
    expect(journalKey('d2', 'default', 'http://h')).not.toBe(a);
    expect(journalKey('d1', 'other', 'http://h')).not.toBe(a);
    expect(journalKey('d1', 'default', 'http://g')).not.toBe(a);
    // Another client on the same service and profile: its acknowledgements are not this client's.
    expect(journalKey('d1', 'default', 'http://h', 'client-2')).not.toBe(
      journalKey('d1', 'default', 'http://h', 'client-1'),
    );
  });

  it('keeps acknowledgements across a crash, ignoring a torn last line', () => {
    const dir = join(work, 'j1');
    const { journal } = Journal.open(dir, header('k1'), false, now);
    journal.record({ chunk: 0, first: 'A', last: 'B', customers: 2, skipped: [], at: now.toISOString() });
    journal.record({
      chunk: 2,
      first: 'E',
      last: 'F',
      customers: 2,
      skipped: [{ path: 'customers.1', id: 'F', errors: ['x'] }],
      at: now.toISOString(),
    });
    journal.close();
    appendFileSync(journal.path, '{"type":"ack","chunk":3,"fir');
    const { journal: again, resumed } = Journal.open(dir, header('k1'), true, now);
    expect(resumed).toBe(true);
    expect(again.acknowledged).toBe(2);
    expect(again.ack(0)?.first).toBe('A');
    expect(again.ack(1)).toBeUndefined();
    expect(again.ack(2)?.skipped[0]?.id).toBe('F');
    expect(again.ack(3)).toBeUndefined();
    again.close();
  });

  it('after a torn last line, keeps the acknowledgements appended by the resumed run', () => {
    const dir = join(work, 'j3');
    const { journal } = Journal.open(dir, header('k3'), false, now);
    journal.record({ chunk: 0, first: 'A', last: 'B', customers: 2, skipped: [], at: now.toISOString() });
    journal.close();
    appendFileSync(journal.path, '{"type":"ack","chunk":1,"fir');
    const { journal: resumed } = Journal.open(dir, header('k3'), true, now);
    resumed.record({ chunk: 1, first: 'C', last: 'D', customers: 2, skipped: [], at: now.toISOString() });
    resumed.close();
    const { journal: again } = Journal.open(dir, header('k3'), true, now);
    expect(again.acknowledged).toBe(2);
    expect(again.ack(1)?.first).toBe('C');
    again.close();
  });

  it('prunes journals nobody touched for a long time, and keeps the others', () => {
    const dir = join(work, 'j4');
    const folder = join(dir, 'journals');
    mkdirSync(folder, { recursive: true });
    const old = join(folder, 'old.ndjson');
    const recent = join(folder, 'recent.ndjson');
    writeFileSync(old, '{}\n');
    writeFileSync(recent, '{}\n');
    const longAgo = (Date.now() - (JOURNAL_KEEP_DAYS + 1) * 24 * 3600 * 1000) / 1000;
    utimesSync(old, longAgo, longAgo);
    Journal.open(dir, header('k4'), false, now).journal.close();
    expect(existsSync(old)).toBe(false);
    expect(existsSync(recent)).toBe(true);
  });

  it('starts afresh without --resume, and refuses to resume with other chunk settings', () => {
    const dir = join(work, 'j2');
    const { journal } = Journal.open(dir, header('k2'), false, now);
    journal.record({ chunk: 0, first: 'A', last: 'A', customers: 1, skipped: [], at: now.toISOString() });
    journal.close();
    expect(() => Journal.open(dir, header('k2', 500), true, now)).toThrow(UsageError);
    const { journal: fresh, resumed } = Journal.open(dir, header('k2'), false, now);
    expect(resumed).toBe(false);
    expect(fresh.acknowledged).toBe(0);
    fresh.close();
    expect(readFileSync(fresh.path, 'utf8').trim().split('\n')).toHaveLength(1);
  });
});

describe('PushLock', () => {
  const now = new Date();
  it('lets one push per profile run, and names the holder to the second', () => {
    const dir = join(work, 'l1');
    const lock = PushLock.acquire(dir, 'default', 'customers batch', now);
    let error: unknown;
    try {
      PushLock.acquire(dir, 'default', 'customers batch', now);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(PushLockedError);
    expect((error as PushLockedError).exitCode).toBe(LOCKED_EXIT_CODE);
    expect((error as Error).message).toMatch(
      new RegExp(`another push is running for profile "default" \\(process ${process.pid}`),
    );
    const other = PushLock.acquire(dir, 'staging', 'customers batch', now);
    other.release();
    lock.release();
    PushLock.acquire(dir, 'default', 'customers batch', now).release();
  });

  it('takes over the lock of a process that is gone', () => {
    const dir = join(work, 'l2');
    const first = PushLock.acquire(dir, 'default', 'customers batch', now);
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const owner = JSON.parse(readFileSync(first.path, 'utf8'));
    writeFileSync(first.path, JSON.stringify({ ...owner, pid: Number(dead) }));
    const second = PushLock.acquire(dir, 'default', 'customers batch', now);
    expect(JSON.parse(readFileSync(second.path, 'utf8')).pid).toBe(process.pid);
    second.release();
  });
});

describe('PushLock takeover race', () => {
  it('does not remove a lock another run took over after both found the same dead owner', () => {
    const dir = join(work, 'l3');
    const first = PushLock.acquire(dir, 'default', 'customers batch', new Date());
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout.toString();
    const owner = JSON.parse(readFileSync(first.path, 'utf8'));
    const stale = { ...owner, pid: Number(dead) };
    writeFileSync(first.path, JSON.stringify(stale));
    // Run A takes the stale lock over; run B, which read the same dead owner a moment earlier, acts late.
    const a = PushLock.acquire(dir, 'default', 'customers batch', new Date(Date.now() + 1));
    const held = readFileSync(a.path, 'utf8');
    removeStale(a.path, stale);
    expect(readFileSync(a.path, 'utf8')).toBe(held);
    expect(() => PushLock.acquire(dir, 'default', 'customers batch', new Date())).toThrow(PushLockedError);
    expect(existsSync(`${a.path}.takeover`)).toBe(false);
    a.release();
    expect(existsSync(a.path)).toBe(false);
  });
});

describe('applySkips', () => {
  const traces: CustomerTrace[] = [
    {
      customerId: 'C0',
      src: 0,
      row: 2,
      loans: [
        {
          loanId: 'L0',
          origin: { src: 0, row: 2 },
          payments: { src: 1, rows: [5, 6] },
        },
      ],
    },
    {
      customerId: 'C1',
      src: 0,
      row: 3,
      loans: [{ loanId: 'L1', origin: { src: 0, row: 3 }, payments: { src: 1, rows: [7] } }],
    },
  ];
  /** The payment ids the customers' JSON carries (read back from the request's body in a run). */
  const ids = (c: number, l: number) => [[['P0', 'P1']], [['P2']]][c]?.[l] ?? [];
  it('maps paths back to rows, and a skipped loan takes its payments with it', () => {
    const result = applySkips(
      traces,
      [
        { path: 'customers.0.loans.0.payments.1', id: 'P1', errors: ['payment_at: required'] },
        { path: 'customers.1.loans.0', id: 'L1', errors: ['loan_amount: must be a whole number of cents'] },
      ],
      ids,
    );
    expect(result.rejected).toEqual({ customers: 0, loans: 1, payments: 2 });
    expect(result.rejects.map((r) => [r.level, r.src, r.row, r.paymentId ?? r.loanId, r.field ?? ''])).toEqual([
      ['loan', 0, 3, 'L1', 'loan_amount'],
      ['payment', 1, 7, 'P2', ''],
      ['payment', 1, 6, 'P1', 'payment_at'],
    ]);
  });
  it('counts an object once even when the service also lists what is inside it', () => {
    const result = applySkips(
      traces,
      [
        { path: 'customers.0', id: 'C0', errors: ['bad'] },
        { path: 'customers.0.loans.0.payments.0', id: 'P0', errors: ['also bad'] },
      ],
      ids,
    );
    expect(result.rejected).toEqual({ customers: 1, loans: 1, payments: 2 });
  });
});

describe('stateDir', () => {
  it('follows LEADCTL_STATE_DIR, then XDG_STATE_HOME, then ~/.local/state', () => {
    expect(stateDir({ LEADCTL_STATE_DIR: '/s' }, '/home/u')).toBe('/s');
    expect(stateDir({ XDG_STATE_HOME: '/x' }, '/home/u')).toBe('/x/leadctl');
    expect(stateDir({ XDG_STATE_HOME: 'relative' }, '/home/u')).toBe('/home/u/.local/state/leadctl');
    expect(stateDir({}, '/home/u')).toBe('/home/u/.local/state/leadctl');
  });
});

describe('a state folder that cannot be written', () => {
  // A path through a regular file cannot be created, whoever runs the test (root included).
  const blocked = join(work, 'not-a-folder');
  writeFileSync(blocked, 'x');
  const dir = join(blocked, 'state');

  function thrown(fn: () => unknown): unknown {
    try {
      fn();
    } catch (err) {
      return err;
    }
    return undefined;
  }

  it('the lock: exit 2 naming the folder and LEADCTL_STATE_DIR, not an unexpected error', () => {
    const err = thrown(() => PushLock.acquire(dir, 'default', 'customers batch', new Date()));
    expect(err).toBeInstanceOf(LeadctlError);
    expect((err as LeadctlError).exitCode).toBe(ExitCode.USAGE);
    expect((err as LeadctlError).message).toContain(`cannot write the state folder ${dir}`);
    expect((err as LeadctlError).hint).toContain('LEADCTL_STATE_DIR');
  });

  it('the journal: the same', () => {
    const err = thrown(() =>
      Journal.open(
        dir,
        {
          key: 'k9',
          profile: 'default',
          base_url: 'http://127.0.0.1:1',
          inputs: ['auto:x.csv'],
          settings: { maxCustomers: 1000, maxBytes: 8 },
        },
        false,
        new Date(),
      ),
    );
    expect(err).toBeInstanceOf(LeadctlError);
    expect((err as LeadctlError).exitCode).toBe(ExitCode.USAGE);
    expect((err as LeadctlError).hint).toContain('LEADCTL_STATE_DIR');
  });
});
