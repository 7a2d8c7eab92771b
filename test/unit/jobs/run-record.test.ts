import { describe, expect, it } from 'vitest';
import type { ApiEvent } from '../../../src/api/client.js';
import { EXAMPLES_PER_REASON, MAX_BUCKETS, RunRecorder, SAMPLED_REASONS } from '../../../src/jobs/run-record.js';
import { manualClock } from '../../helpers/run-report.js';

const PATH = '/api/v1/loan-performance/batches/customers';
const answer = (status: number, durationMs: number, attempt = 1): ApiEvent => ({
  type: 'response',
  method: 'POST',
  path: PATH,
  status,
  durationMs,
  attempt,
  bytes: 100,
});
const request = (index: number, customers: number) =>
  ({
    type: 'request',
    index,
    outcome: 'accepted',
    customers,
    loans: customers * 2,
    payments: 0,
    skipped: 0,
    unconfirmed: 0,
    doneCustomers: 0,
    totalCustomers: 0,
    requestsDone: 0,
  }) as const;

describe('the run recorder', () => {
  it('keeps at most MAX_BUCKETS spans however long the run, and loses no record, request or retry', () => {
    const clock = manualClock();
    const recorder = new RunRecorder(clock.now);
    for (let i = 0; i < 10_000; i++) {
      clock.advance(1_000);
      recorder.api(answer(i % 10 === 0 ? 503 : 200, 5));
      if (i % 10 === 0)
        recorder.api({ type: 'retry', method: 'POST', path: PATH, attempt: 1, delayMs: 1, reason: 'x' });
      recorder.settled(3);
    }
    const record = recorder.finish();
    expect(record.buckets.length).toBeLessThanOrEqual(MAX_BUCKETS);
    expect(record.buckets.length).toBeGreaterThan(MAX_BUCKETS / 2);
    expect(record.buckets.length * record.bucketMs).toBeGreaterThanOrEqual(record.endedAt - record.startedAt);
    expect(record.buckets.reduce((n, b) => n + b.records, 0)).toBe(30_000);
    expect(record.buckets.reduce((n, b) => n + b.requests, 0)).toBe(10_000);
    expect(record.buckets.reduce((n, b) => n + b.retries, 0)).toBe(1_000);
    expect(record.requests).toEqual({ '2xx': 9_000, '3xx': 0, '4xx': 0, '5xx': 1_000, network_error: 0 });
    expect(record.retries).toBe(1_000);
    expect(record.bytesSent).toBe(1_000_000);
  });

  it('keeps the ten slowest answers, slowest first, each with the push request it settled', () => {
    const clock = manualClock();
    const recorder = new RunRecorder(clock.now);
    for (let i = 0; i < 50; i++) {
      clock.advance(10);
      recorder.api(answer(200, (i * 37) % 101));
      recorder.push(request(i, i + 1));
    }
    // A request settled without an answer of its own (acknowledged in an earlier run) takes none.
    recorder.push({ ...request(99, 5), outcome: 'from-journal' });
    const { slowest } = recorder.finish();
    expect(slowest).toHaveLength(10);
    const durations = slowest.map((s) => s.durationMs);
    expect(durations).toEqual([...durations].sort((a, b) => b - a));
    expect(durations[0]).toBe(100);
    for (const s of slowest) {
      const i = s.chunk!.number - 1;
      expect(s.durationMs).toBe((i * 37) % 101);
      expect(s.chunk).toEqual({ number: i + 1, customers: i + 1, loans: (i + 1) * 2, payments: 0 });
    }
  });

  it('leaves an answer unpaired when another event came between it and a request', () => {
    const recorder = new RunRecorder(manualClock().now);
    recorder.api(answer(503, 900));
    recorder.api({ type: 'retry', method: 'POST', path: PATH, attempt: 1, delayMs: 1, reason: 'HTTP 503' });
    recorder.api(answer(200, 10, 2));
    recorder.push(request(0, 7));
    const { slowest } = recorder.finish();
    expect(slowest[0]).toMatchObject({ status: 503, durationMs: 900 });
    expect(slowest[0]!.chunk).toBeUndefined();
    expect(slowest[1]).toMatchObject({ status: 200, attempt: 2, chunk: { number: 1, customers: 7 } });
  });

  it('drops a query from the path: it may hold a value', () => {
    const recorder = new RunRecorder(manualClock().now);
    recorder.api({ ...answer(200, 1), path: '/api/v1/leads?date=2026-11-01&cursor=abc' } as ApiEvent);
    expect(recorder.finish().slowest[0]!.path).toBe('/api/v1/leads');
  });

  it('counts records from cumulative record events, and samples problems with few examples each', () => {
    const recorder = new RunRecorder(manualClock().now);
    recorder.push({ type: 'record', done: 5, total: 10, rejected: 0 });
    recorder.push({ type: 'record', done: 9, total: 10, rejected: 1 });
    expect(recorder.finish().buckets.reduce((n, b) => n + b.records, 0)).toBe(9);
    let made = 0;
    for (let i = 0; i < 1000; i++)
      recorder.sample(`kind ${i % (SAMPLED_REASONS + 10)}`, () => {
        made++;
        return `row ${i}`;
      });
    const { reasons, other } = recorder.sampled();
    expect(reasons).toHaveLength(SAMPLED_REASONS);
    for (const r of reasons) expect(r.examples).toHaveLength(EXAMPLES_PER_REASON);
    expect(reasons.reduce((n, r) => n + r.count, 0) + other).toBe(1000);
    // Examples are put into words only when kept.
    expect(made).toBe(SAMPLED_REASONS * EXAMPLES_PER_REASON);
  });
});
