import { describe, expect, it } from 'vitest';
import { nextStepHint } from '../../../src/cli/push-run.js';

const authHint = 'the client id or secret is wrong, or the secret was rotated: fix LEADCTL_CLIENT_SECRET';

describe('the hint after a push that did not finish', () => {
  it('credentials refused mid-run: fix them first, then resume (a bare resume would be refused again)', () => {
    const hint = nextStepHint({
      status: 'authentication_failed',
      journal: '/state/journals/k.ndjson',
      error: { code: 'authentication', message: 'refused', hint: authHint },
    });
    expect(hint).toBe(`${authHint}; then rerun the same command with --resume to send only what was not acknowledged`);
  });

  it('credentials refused before anything was sent: only the fix', () => {
    expect(
      nextStepHint({
        status: 'authentication_failed',
        journal: null,
        error: { code: 'authentication', message: 'refused', hint: authHint },
      }),
    ).toBe(authHint);
  });

  it('service down or interrupted: resume', () => {
    for (const status of ['service_unavailable', 'interrupted'] as const) {
      expect(nextStepHint({ status, journal: '/j', error: { code: 'network', message: 'down' } })).toBe(
        'rerun the same command with --resume to send only what was not acknowledged',
      );
    }
  });

  it('an unexpected failure keeps its own advice; a completed run has none', () => {
    expect(
      nextStepHint({
        status: 'failed',
        journal: '/j',
        error: { code: 'journal_mismatch', message: 'x', hint: 'rerun without --resume' },
      }),
    ).toBe('rerun without --resume');
    expect(nextStepHint({ status: 'completed_with_rejects', journal: '/j' })).toBeUndefined();
  });

  it('a full or read-only disk: the fix, then --resume only when something was sent', () => {
    const error = { code: 'environment', message: 'the rejects file /x: no space (ENOSPC)', hint: 'free space' };
    const requests = (sent: number, before = 0) => ({ total: 3, sent, acknowledged_before: before, not_sent: 1 });
    expect(nextStepHint({ status: 'failed', journal: '/j', error, requests: requests(2) })).toBe(
      'free space; then rerun the same command with --resume to send only what was not acknowledged',
    );
    expect(nextStepHint({ status: 'failed', journal: '/j', error, requests: requests(0, 1) })).toMatch(/--resume/);
    expect(nextStepHint({ status: 'failed', journal: '/j', error, requests: requests(0) })).toBe('free space');
    expect(nextStepHint({ status: 'failed', journal: null, error, requests: requests(2) })).toBe('free space');
  });
});
