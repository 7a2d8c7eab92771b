import { describe, expect, it } from 'vitest';
import { AuthError, NotFoundError, ServiceError } from '../../../../src/errors.js';
import { ReadingStopped } from '../../../../src/jobs/push/reading.js';
import { RunStop } from '../../../../src/jobs/push/stopping.js';

describe('RunStop', () => {
  it('a first signal stops the reading at once and cuts the requests off after the grace', async () => {
    const stop = new RunStop(20);
    let told = 0;
    stop.signal('SIGTERM', () => told++);
    expect(stop.reason).toEqual({ kind: 'signal', signal: 'SIGTERM' });
    expect(stop.readingSignal.reason).toBeInstanceOf(ReadingStopped);
    expect(stop.requestSignal.aborted).toBe(false);
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stop.requestSignal.aborted).toBe(true);
    expect(told).toBe(1);
  });

  it('a second signal cuts the requests off at once, and keeps the first as the reason', () => {
    const stop = new RunStop(60_000);
    let told = 0;
    stop.signal('SIGINT', () => told++);
    stop.signal('SIGTERM', () => told++);
    expect(stop.requestSignal.aborted).toBe(true);
    expect((stop.requestSignal.reason as Error).message).toBe('stopped by a second SIGTERM');
    expect(stop.reason).toEqual({ kind: 'signal', signal: 'SIGINT' });
    expect(told).toBe(1);
  });

  it('an unexpected error outranks a signal or an outage, and the first error stays', () => {
    const stop = new RunStop();
    stop.requestFailed(new ServiceError('down', 503));
    expect(stop.reason?.kind).toBe('service');
    stop.fail(new Error('disk full'));
    stop.fail(new Error('later'));
    expect(stop.reason?.kind).toBe('failed');
    expect(stop.reason?.kind === 'failed' && stop.reason.error.message).toBe('disk full');
  });

  it('refused credentials stop the run; an error that is not an outage is thrown back; nothing once cut off', () => {
    const stop = new RunStop();
    stop.requestFailed(new AuthError('no'));
    expect(stop.reason?.kind).toBe('auth');
    const other = new NotFoundError('gone');
    expect(() => stop.requestFailed(other)).toThrow(other);
    stop.cutOff(new Error('the push ended'));
    expect(() => stop.requestFailed(other)).not.toThrow();
  });
});
