import { describe, expect, it } from 'vitest';
import { PushReporter, type PushEvent } from '../../../../src/jobs/push/progress.js';

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
