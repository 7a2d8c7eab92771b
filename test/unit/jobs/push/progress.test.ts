import { describe, expect, it } from 'vitest';
import { formatDuration, PushReporter, type PushEvent } from '../../../../src/jobs/push/progress.js';

function reporter(live: boolean, times: number[]) {
  const notes: string[] = [];
  const updates: string[] = [];
  let i = 0;
  const r = new PushReporter(
    { note: (l) => notes.push(l), update: (t) => updates.push(t) },
    live,
    () => times[Math.min(i++, times.length - 1)]!,
  );
  return { r, notes, updates };
}

const request = (over: Partial<Extract<PushEvent, { type: 'request' }>> = {}): PushEvent => ({
  type: 'request',
  index: 0,
  outcome: 'accepted',
  customers: 1,
  loans: 1,
  payments: 3,
  skipped: 0,
  unconfirmed: 0,
  doneCustomers: 1,
  totalCustomers: 1,
  requestsDone: 1,
  ...over,
});

describe('push progress lines', () => {
  it('counts in the singular for one record and leaves the ETA out of a single-request run', () => {
    const { r, notes } = reporter(false, [0]);
    r.handle({ type: 'staged', rows: 1, seconds: 0.01 });
    r.handle(request());
    expect(notes).toEqual([
      'read 1 row in under 0.1 s; checking and sending',
      'request 1 accepted: 1 customer, 1 loan, 3 payments · 1/1 customers',
    ]);
    expect(notes.join('\n')).not.toContain('ETA');
  });

  it('gives an ETA once a rate can be measured and work remains', () => {
    const { r, notes } = reporter(false, [0, 0, 2000]);
    r.handle(request({ customers: 2, loans: 0, payments: 0, doneCustomers: 2, totalCustomers: 6 }));
    r.handle(request({ index: 1, customers: 2, loans: 2, payments: 1, doneCustomers: 4, totalCustomers: 6 }));
    expect(notes[0]).toBe('request 1 accepted: 2 customers, 0 loans, 0 payments · 2/6 customers');
    // 4 customers in 2 s: the 2 left take about a second.
    expect(notes[1]).toBe('request 2 accepted: 2 customers, 2 loans, 1 payment · 4/6 customers · ETA 0:01');
  });

  it('leaves rate and ETA out of the live line until they mean something', () => {
    const { r, updates } = reporter(true, [0]);
    r.handle(request({ doneCustomers: 1, totalCustomers: 3 }));
    expect(updates).toEqual(['sending: request 1 · 1/3 customers']);
  });
});

describe('push progress, every event', () => {
  it('in a log, reading lines come at most every 10 s (the first at once), counting rows', () => {
    const { r, notes, updates } = reporter(false, [0, 9_999, 10_000, 19_999, 20_000]);
    for (const rows of [1, 500, 1234, 1500, 20_000]) r.handle({ type: 'reading', file: 'x.csv', rows });
    expect(notes).toEqual(['reading x.csv: 1 row', 'reading x.csv: 1,234 rows', 'reading x.csv: 20,000 rows']);
    expect(updates).toEqual([]);
  });

  it('on a terminal, every reading and record line replaces the live status', () => {
    const { r, notes, updates } = reporter(true, [0]);
    r.handle({ type: 'reading', file: 'x.csv', rows: 2 });
    r.handle({ type: 'reading', file: 'x.csv', rows: 3 });
    r.handle({ type: 'record', done: 1200, total: 3400, rejected: 0 });
    r.handle({ type: 'record', done: 1300, total: 3400, rejected: 2 });
    expect(updates).toEqual([
      'reading x.csv: 2 rows',
      'reading x.csv: 3 rows',
      'sending: 1,200/3,400 records',
      'sending: 1,300/3,400 records, 2 rejected',
    ]);
    expect(notes).toEqual([]);
  });

  it('record lines in a log are throttled too', () => {
    const { r, notes } = reporter(false, [5, 6, 10_005]);
    r.handle({ type: 'record', done: 1, total: 3, rejected: 1 });
    r.handle({ type: 'record', done: 2, total: 3, rejected: 1 });
    r.handle({ type: 'record', done: 3, total: 3, rejected: 1 });
    expect(notes).toEqual(['sending: 1/3 records, 1 rejected', 'sending: 3/3 records, 1 rejected']);
  });

  it('an input digest says nothing; staging, resuming and stopping are lines that stay', () => {
    const { r, notes, updates } = reporter(true, [0]);
    r.handle({ type: 'input', file: 'x.csv', sha256: 'ab' });
    r.handle({ type: 'staged', rows: 2500, seconds: 12.4 });
    r.handle({ type: 'resuming', acknowledged: 1, journal: '/s/j.ndjson' });
    r.handle({ type: 'resuming', acknowledged: 3, journal: '/s/j.ndjson' });
    r.handle({ type: 'resuming', acknowledged: 0, journal: '/s/j.ndjson' });
    r.handle({ type: 'stopping', reason: 'SIGTERM', inFlight: 2 });
    expect(notes).toEqual([
      'read 2,500 rows in 12 s; checking and sending',
      'resuming: 1 request was acknowledged in an earlier run (journal /s/j.ndjson)',
      'resuming: 3 requests were acknowledged in an earlier run (journal /s/j.ndjson)',
      'resuming an earlier run of these inputs, of which no request had been acknowledged: sending everything (journal /s/j.ndjson)',
      'stopping (SIGTERM): no new requests; waiting for 2 in flight',
    ]);
    expect(updates).toEqual([]);
  });

  it('words each outcome of a request in a log', () => {
    const { r, notes } = reporter(false, [0]);
    const base = { customers: 2, loans: 3, payments: 1, doneCustomers: 2, totalCustomers: 2 };
    r.handle(request({ ...base, skipped: 4 }));
    r.handle(request({ ...base, index: 1, outcome: 'unconfirmed', unconfirmed: 1 }));
    r.handle(request({ ...base, index: 2, outcome: 'refused', refusal: { status: 422, reason: 'no' } }));
    r.handle(request({ ...base, index: 3, outcome: 'refused', refusal: { status: null, reason: 'no' } }));
    r.handle(request({ ...base, index: 4, outcome: 'refused' }));
    r.handle(request({ ...base, index: 5, outcome: 'from-journal' }));
    r.handle(request({ ...base, index: 6, outcome: 'from-journal', unconfirmed: 2 }));
    r.handle(request({ ...base, index: 7, outcome: 'would-send' }));
    const what = '2 customers, 3 loans, 1 payment';
    expect(notes).toEqual(
      [
        `request 1 accepted: ${what} (4 skipped by the service)`,
        `request 2 sent: ${what}; the service answered without a verdict per record (1 customer unconfirmed)`,
        `request 3 refused by the service (HTTP 422): ${what} rejected; --resume sends it again`,
        `request 4 refused by the service: ${what} rejected; --resume sends it again`,
        `request 5 refused by the service: ${what} rejected; --resume sends it again`,
        `request 6 already acknowledged in an earlier run: ${what}`,
        `request 7 already acknowledged in an earlier run: ${what} (2 customers unconfirmed)`,
        `request 8 would send ${what}`,
      ].map((l) => `${l} · 2/2 customers`),
    );
  });

  it('the live line gives the rate and ETA, measured from the first request, with thousands separated', () => {
    // First request: starts the clock at 1 s and reads it at once; the second 2 s later, the third 4 s later.
    const { r, updates } = reporter(true, [1000, 1000, 3000, 5000]);
    r.handle(request({ requestsDone: 1, doneCustomers: 1000, totalCustomers: 10_000 }));
    r.handle(request({ requestsDone: 2, doneCustomers: 4000, totalCustomers: 10_000 }));
    r.handle(request({ requestsDone: 3, doneCustomers: 10_000, totalCustomers: 10_000 }));
    expect(updates).toEqual([
      'sending: request 1 · 1,000/10,000 customers',
      'sending: request 2 · 4,000/10,000 customers · 2,000 customers/s · ETA 0:03',
      'sending: request 3 · 10,000/10,000 customers · 2,500 customers/s',
    ]);
  });

  it('an ETA in the log, and none once more was done than counted', () => {
    const { r, notes } = reporter(false, [0, 0, 1000, 2000]);
    r.handle(request({ doneCustomers: 0, totalCustomers: 10 }));
    r.handle(request({ index: 1, doneCustomers: 1, totalCustomers: 3601 }));
    r.handle(request({ index: 2, doneCustomers: 12, totalCustomers: 10 }));
    expect(notes[1]).toMatch(/ · 1\/3,601 customers · ETA 1:00:00$/);
    expect(notes[2]).toMatch(/ · 12\/10 customers$/);
  });
});

describe('formatDuration', () => {
  it('minutes and seconds, hours when there are any, rounded to the second', () => {
    expect(formatDuration(0)).toBe('0:00');
    expect(formatDuration(59.4)).toBe('0:59');
    expect(formatDuration(59.6)).toBe('1:00');
    expect(formatDuration(754)).toBe('12:34');
    expect(formatDuration(3599)).toBe('59:59');
    expect(formatDuration(3600)).toBe('1:00:00');
    expect(formatDuration(3725)).toBe('1:02:05');
    expect(formatDuration(36_000 + 61)).toBe('10:01:01');
  });
});
