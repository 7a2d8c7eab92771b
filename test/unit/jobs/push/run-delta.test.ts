import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHECK_ONLY, CustomerDelta, DEFAULT_MAX_AGE_DAYS } from '../../../../src/jobs/delta/customers.js';
import { type CustomerDigest, DeltaRecord } from '../../../../src/jobs/delta/record.js';
import { recordPath } from '../../../../src/jobs/delta/record-files.js';
import type { Chunk } from '../../../../src/jobs/push/chunker.js';
import type { JournalHeader } from '../../../../src/jobs/push/journal.js';
import { beginRunDelta, deltaVerdicts, openRunDelta } from '../../../../src/jobs/push/run-delta.js';
import type { ValidCustomer } from '../../../../src/jobs/push/validate.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function scratch(): { state: string; config: string; env: Record<string, string> } {
  const d = mkdtempSync(join(tmpdir(), 'leadctl-run-delta-'));
  dirs.push(d);
  const state = join(d, 'state');
  const config = join(d, 'config');
  return { state, config, env: { LEADCTL_STATE_DIR: state, LEADCTL_CONFIG_DIR: config } };
}
const target = { profile: 'default', baseUrl: 'http://127.0.0.1:9' };

describe('openRunDelta', () => {
  it('a run that may make the record makes it in the state folder, with the mode and --max-age given', () => {
    const { state, env } = scratch();
    const delta = openRunDelta(env, target, { mode: 'full', maxAgeDays: 3, create: true, warn: () => undefined });
    try {
      expect(delta.options).toEqual({ mode: 'full', maxAgeDays: 3 });
      expect(delta.record.path).toBe(recordPath(state, target));
      expect(existsSync(recordPath(state, target))).toBe(true);
    } finally {
      delta.close();
    }
  });

  it('a check-only run where no record was ever made reads an empty one and makes none; --max-age defaults', () => {
    const { state, env } = scratch();
    const delta = openRunDelta(env, target, { mode: 'changed-only', create: false, warn: () => undefined });
    try {
      expect(delta.options).toEqual({ mode: 'changed-only', maxAgeDays: DEFAULT_MAX_AGE_DAYS });
      expect(delta.record.path).toBeNull();
      expect(existsSync(recordPath(state, target))).toBe(false);
      const digest = { id: delta.record.digest('customer', 'C1'), payload: delta.record.digest('payload', 'x') };
      expect(delta.shouldSend(digest)).toBe(true);
    } finally {
      delta.close();
    }
  });

  it('passes the record warnings on: a corrupt record read by a check-only run', () => {
    const { state, config, env } = scratch();
    // Make a record (and its key), then corrupt it.
    openRunDelta(env, target, { mode: 'changed-only', create: true, warn: () => undefined }).close();
    const path = recordPath(state, target);
    writeFileSync(path, 'not a database, not at all'.repeat(200));
    mkdirSync(config, { recursive: true });
    const warnings: string[] = [];
    const delta = openRunDelta(env, target, { mode: 'changed-only', create: false, warn: (l) => warnings.push(l) });
    try {
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(path);
      expect(warnings[0]).toContain('corrupt');
      expect(delta.record.path).toBeNull();
    } finally {
      delta.close();
    }
  });
});

function emptyDelta(maxAgeDays = 1) {
  return new CustomerDelta(DeltaRecord.empty(), { mode: 'changed-only', maxAgeDays });
}
const DAY = 24 * 3600 * 1000;

describe('beginRunDelta', () => {
  const header: JournalHeader = {
    type: 'header',
    version: 1,
    key: 'k'.repeat(64),
    created: '2026-01-10T00:00:00.000Z',
    profile: 'default',
    base_url: target.baseUrl,
    inputs: ['auto:a.csv'],
    settings: { maxCustomers: 1000, maxBytes: 1 },
  };

  it('names a journaled run from its journal (the same name on resume) and dates it from the journal', () => {
    const delta = emptyDelta();
    // Started much later (a resume): the reference is when the journal was created.
    beginRunDelta(delta, header, new Date('2026-03-01T00:00:00Z'));
    const c = { id: delta.record.digest('customer', 'C1'), payload: delta.record.digest('payload', 'p') };
    delta.settle([c], [], Date.parse('2026-01-09T12:00:00Z'));
    delta.flushSettled();
    const run = createHash('sha256').update(`${header.key}\n${header.created}`).digest('hex').slice(0, 16);
    expect(delta.record.customer(c.id)?.run).toBe(run);
    // Recorded by this very run: sent again.
    expect(delta.shouldSend(c)).toBe(true);

    // Another run, begun from the same journal's date: within a day of it, so unchanged...
    const other = { ...header, key: 'j'.repeat(64) };
    beginRunDelta(delta, other, new Date('2026-03-01T00:00:00Z'));
    expect(delta.shouldSend(c)).toBe(false);
    // ...but over a day old for a journal created two days later.
    beginRunDelta(delta, { ...other, created: '2026-01-11T00:00:00.000Z' }, new Date('2026-01-11T00:00:00Z'));
    expect(delta.shouldSend(c)).toBe(true);
    delta.close();
  });

  it('names a run without a journal check-only, dated when it started', () => {
    const delta = emptyDelta();
    const started = new Date('2026-01-10T00:00:00Z');
    beginRunDelta(delta, undefined, started);
    const c = { id: delta.record.digest('customer', 'C1'), payload: delta.record.digest('payload', 'p') };
    delta.settle([c], [], started.getTime() - DAY / 2);
    delta.flushSettled();
    expect(delta.record.customer(c.id)?.run).toBe(CHECK_ONLY);
    // Recorded under the name a check-only run has: sent again (this is "this run's").
    expect(delta.shouldSend(c)).toBe(true);
    const fresh = emptyDelta();
    beginRunDelta(fresh, header, started);
    fresh.record.settle([c], [], started.getTime() - DAY / 2, 'earlier');
    expect(fresh.shouldSend(c)).toBe(false);
    const late = emptyDelta();
    beginRunDelta(late, undefined, new Date(started.getTime() + DAY));
    late.record.settle([c], [], started.getTime() - DAY / 2, 'earlier');
    expect(late.shouldSend(c)).toBe(true);
    delta.close();
    fresh.close();
    late.close();
  });
});

describe('deltaVerdicts', () => {
  const digest = (i: number): CustomerDigest => ({ id: Buffer.from([i]), payload: Buffer.from([i, i]) });
  const chunk = (n: number, without: number[] = []): Pick<Chunk, 'customers'> => ({
    customers: Array.from(
      { length: n },
      (_, i) => ({ customerId: `C${i}`, ...(without.includes(i) ? {} : { digest: digest(i) }) }) as ValidCustomer,
    ),
  });
  const ids = (list: CustomerDigest[]) => list.map((d) => d.id[0]);

  it('remembers what was acknowledged, forgets customers skipped in part or refused, by their index', () => {
    const v = deltaVerdicts(
      chunk(14, [3]),
      {
        skipped: [{ path: 'customers.1.loans.0', id: 'L', errors: ['x'] }],
        refused: [
          { path: 'customers.12', id: null, errors: ['y'] },
          { path: 'loans.5', id: null, errors: ['z'] },
          { path: 'xcustomers.4', id: null, errors: ['z'] },
        ],
        unconfirmed: [],
      },
      false,
    );
    expect(ids(v.forget)).toEqual([1, 12]);
    expect(ids(v.remember)).toEqual([0, 2, 4, 5, 6, 7, 8, 9, 10, 11, 13]);
  });

  it('forgets the customers of an answer that named one the request did not have, and remembers those of a plain 2xx', () => {
    const untrusted = deltaVerdicts(
      chunk(4),
      {
        skipped: [{ path: 'customers.3', id: 'Z', errors: ['z'], unplaced: true }],
        refused: [],
        unconfirmed: [0, 1],
      },
      false,
    );
    expect(ids(untrusted.forget)).toEqual([0, 1]);
    expect(ids(untrusted.remember)).toEqual([2, 3]);
    const plain = deltaVerdicts(chunk(2), { skipped: [], refused: [], unconfirmed: [0, 1] }, false);
    expect(ids(plain.remember)).toEqual([0, 1]);
  });

  it('forgets every customer of a refused request', () => {
    const v = deltaVerdicts(chunk(3, [1]), { skipped: [], refused: [], unconfirmed: [] }, true);
    expect(ids(v.forget)).toEqual([0, 2]);
    expect(v.remember).toEqual([]);
  });
});
