import { readFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LeadctlError } from '../../../../src/errors.js';
import { DEFAULT_MAX_AGE_DAYS } from '../../../../src/jobs/delta/customers.js';
import { type Journal, journalKey } from '../../../../src/jobs/push/journal.js';
import { ackEntry, earlierAck, type JournalOfRun, openRunJournal } from '../../../../src/jobs/push/run-journal.js';
import type { ValidCustomer } from '../../../../src/jobs/push/validate.js';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function run(over: Partial<JournalOfRun> = {}): JournalOfRun & { warnings: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'leadctl-run-journal-'));
  dirs.push(dir);
  const warnings: string[] = [];
  return {
    dir,
    target: { profile: 'prod', baseUrl: 'http://127.0.0.1:9/', clientId: 'client-1' },
    inputs: [
      { role: 'loans', path: 'loans.csv' },
      { role: 'payments', path: 'payments.csv' },
    ],
    chunkSize: 500,
    maxBytes: 123456,
    started: new Date('2026-01-10T00:00:00.000Z'),
    warn: (line) => warnings.push(line),
    warnings,
    ...over,
  };
}

const headerOf = (journal: Journal) => JSON.parse(readFileSync(journal.path, 'utf8').split('\n')[0]!);
const chunk = (index: number, ids: string[]) => ({
  index,
  customers: ids.map((customerId) => ({ customerId }) as ValidCustomer),
});

describe('openRunJournal', () => {
  it('keys the journal on the digest and the target, and writes the settings a resume must repeat', () => {
    const r = run();
    const { journal, resumed } = openRunJournal(r, 'd'.repeat(64), 'streamed', false);
    journal.close();
    expect(resumed).toBe(false);
    expect(headerOf(journal)).toEqual({
      type: 'header',
      version: 1,
      created: '2026-01-10T00:00:00.000Z',
      key: journalKey('d'.repeat(64), 'prod', 'http://127.0.0.1:9/', 'client-1'),
      profile: 'prod',
      base_url: 'http://127.0.0.1:9/',
      inputs: ['loans:loans.csv', 'payments:payments.csv'],
      settings: { maxCustomers: 500, maxBytes: 123456 },
      mode: 'streamed',
    });
    // Another client of the same target keeps another journal.
    const other = openRunJournal(
      { ...r, target: { ...r.target, clientId: 'client-2' } },
      'd'.repeat(64),
      'staged',
      false,
    );
    other.journal.close();
    expect(other.journal.path).not.toBe(journal.path);
    expect(headerOf(other.journal).mode).toBe('staged');
  });

  it('writes how the customers are chosen: --full, or --changed-only with its --max-age', () => {
    const full = openRunJournal(run({ delta: 'full', maxAgeDays: 9 }), 'a', 'staged', false).journal;
    full.close();
    expect(headerOf(full).settings).toEqual({ maxCustomers: 500, maxBytes: 123456, delta: 'full' });
    const changed = openRunJournal(run({ delta: 'changed-only', maxAgeDays: 9 }), 'a', 'staged', false).journal;
    changed.close();
    expect(headerOf(changed).settings.delta).toBe('changed-only, --max-age 9');
    const byDefault = openRunJournal(run({ delta: 'changed-only' }), 'a', 'staged', false).journal;
    byDefault.close();
    expect(headerOf(byDefault).settings.delta).toBe(`changed-only, --max-age ${DEFAULT_MAX_AGE_DAYS}`);
  });

  it('continues the journal of the same inputs on --resume, and warns through the run when it is corrupt', () => {
    const r = run();
    const first = openRunJournal(r, 'b', 'staged', false).journal;
    first.record(ackEntry(chunk(0, ['C1', 'C2']), [], [], new Date(0)));
    first.close();
    const again = openRunJournal(r, 'b', 'staged', true);
    again.journal.close();
    expect(again.resumed).toBe(true);
    expect(again.journal.ack(0)?.customers).toBe(2);
    expect(r.warnings).toEqual([]);

    writeFileSync(again.journal.path, 'garbage\n');
    const fresh = openRunJournal(r, 'b', 'staged', true);
    fresh.journal.close();
    expect(fresh.resumed).toBe(false);
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toContain('corrupt');
  });
});

describe('ackEntry', () => {
  it('names the chunk by index, first and last customer and count, with what was skipped and unconfirmed', () => {
    const skipped = [{ path: 'customers.1', id: 'C2', errors: ['bad'] }];
    expect(ackEntry(chunk(4, ['C1', 'C2', 'C3']), skipped, [0, 2], new Date('2026-01-10T01:02:03.456Z'))).toEqual({
      chunk: 4,
      first: 'C1',
      last: 'C3',
      customers: 3,
      skipped,
      unconfirmed: [0, 2],
      at: '2026-01-10T01:02:03.456Z',
    });
  });

  it('leaves unconfirmed out when every customer had a verdict', () => {
    const entry = ackEntry(chunk(0, ['C1']), [], [], new Date(0));
    expect(entry).toEqual({
      chunk: 0,
      first: 'C1',
      last: 'C1',
      customers: 1,
      skipped: [],
      at: '1970-01-01T00:00:00.000Z',
    });
    expect('unconfirmed' in entry).toBe(false);
  });
});

describe('earlierAck', () => {
  function journalWith(ids: string[]): Journal {
    const journal = openRunJournal(run(), 'c', 'staged', false).journal;
    journal.record(ackEntry(chunk(1, ids), [], [7], new Date(0)));
    journal.close();
    return journal;
  }

  it('is undefined for a chunk no earlier run acknowledged', () => {
    expect(earlierAck(journalWith(['C1', 'C2']), chunk(0, ['C1', 'C2']))).toBeUndefined();
  });

  it('gives the acknowledgement of the same chunk, cut the same way', () => {
    expect(earlierAck(journalWith(['C1', 'C2', 'C3']), chunk(1, ['C1', 'C2', 'C3']))).toMatchObject({
      chunk: 1,
      unconfirmed: [7],
    });
  });

  it.each([
    ['another first customer', ['C0', 'C2', 'C3']],
    ['another last customer', ['C1', 'C2', 'C4']],
    ['another count', ['C1', 'C2', 'C2', 'C3']],
  ])('refuses a chunk cut otherwise than then (%s): a bug, exit 1', (_, ids) => {
    const journal = journalWith(['C1', 'C2', 'C3']);
    let error: unknown;
    try {
      earlierAck(journal, chunk(1, ids));
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(LeadctlError);
    expect(error).toMatchObject({
      code: 'journal_mismatch',
      exitCode: 1,
      message: `the journal ${journal.path} does not match request 2 of these inputs`,
      hint: 'rerun without --resume to send everything again (upserts are safe to repeat)',
    });
  });
});
