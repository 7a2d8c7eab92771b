import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixturePath, readFixture, requestsTo, startEnv, type Env } from './service-env.js';
import { scratchDir } from '../helpers/scratch.js';

interface Offer {
  id: number;
  price: number;
  expires_in: number;
  expires_at: string;
}

describe('legacy post | accept-offer (built binary against the sandbox)', () => {
  let env: Env;

  beforeAll(async () => {
    env = await startEnv();
  });

  afterAll(async () => {
    await env?.stop();
  });

  /** Posts the price-reject fixture until the answer carries at least `min` offers. */
  async function pendingLead(min: number): Promise<{ apiKey: string; offers: Offer[] }> {
    for (let i = 0; i < 4; i++) {
      const r = await env.run([
        'legacy',
        'post',
        fixturePath('legacy', 'price-reject.json'),
        '--api-key',
        env.priceRejectKey,
        '-o',
        'json',
      ]);
      expect(r.code).toBe(6);
      const [answer] = JSON.parse(r.stdout);
      // The answer shows the campaign key's last four only; the key is the campaign's own.
      expect(answer.price_reject.api_key).toBe(
        `${'*'.repeat(env.priceRejectKey.length - 4)}${env.priceRejectKey.slice(-4)}`,
      );
      if (answer.price_reject.offers.length >= min)
        return { apiKey: env.priceRejectKey, offers: answer.price_reject.offers };
    }
    throw new Error(`no pending answer with ${min} offers`);
  }

  it('says --help that a post is not retried once sent', async () => {
    const r = await env.run(['legacy', 'post', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('Not retried automatically once sent');
  });

  it('posts an accepted lead: exit 0 with the redirect URL', async () => {
    const r = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'accepted.json'),
      '--api-key',
      env.directKey,
      '-o',
      'table',
    ]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /^Accepted \(lead id \d+\)\n {2}Redirect URL: http:\/\/127\.0\.0\.1:\d+\/redirect\/[0-9a-f]{32}\n$/,
    );
    expect(r.stdout).toContain(env.sandbox.baseUrl);
  });

  it('posts a lead refused by a suppression list made with `lists create`: exit 4, Rejected', async () => {
    const list = await env.run([
      'lists',
      'create',
      '--name',
      'Blocked SSNs',
      '--type',
      'ssn',
      fixturePath('legacy', 'suppression-ssns.csv'),
    ]);
    expect(list.code).toBe(0);
    const r = await env.run(['legacy', 'post', fixturePath('legacy', 'suppressed.json'), '-o', 'json'], {
      env: { LEADCTL_API_KEY: env.directKey },
    });
    expect(r.code).toBe(4);
    // One lead in the file or many: an array, one record per lead.
    expect(JSON.parse(r.stdout)).toMatchObject([
      { lead: 1, outcome: 'rejected', status: 'OK', result: 'R', redirect_url: null },
    ]);
    const table = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'suppressed.json'),
      '--api-key',
      env.directKey,
      '-o',
      'table',
    ]);
    expect(table.code).toBe(4);
    expect(table.stdout).toMatch(/^Rejected: the lead was not bought/);
  });

  it('catches an invalid lead locally, naming path and rule, and sends nothing', async () => {
    const before = await requestsTo(env.sandbox, 'legacy');
    const r = await env.run(['legacy', 'post', fixturePath('legacy', 'invalid.json'), '--api-key', env.directKey]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(
      'invalid.json: income_sources[0].employer_name: required when income_source is 1 (Employed)',
    );
    expect(r.stderr).toContain('invalid.json: social_security_number: must be exactly 9 digits with no delimiters');
    expect(r.stderr).toContain('invalid.json: rent_or_own: must be one of 1 (Rent), 2 (Own), 3 (Other)');
    expect(r.stderr).toMatch(/8 problems in 1 of 1 lead; nothing was sent/);
    const noKey = await env.run(['legacy', 'post', fixturePath('legacy', 'accepted.json')]);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('accepted.json: api_key: required when campaign_code is absent');
    expect(noKey.stderr).toContain('LEADCTL_API_KEY, with --api-key-file FILE or --api-key-stdin');
    const validateOnly = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'accepted.json'),
      '--api-key',
      'any',
      '--validate-only',
      '-o',
      'table',
    ]);
    expect(validateOnly.code).toBe(0);
    expect(validateOnly.stdout).toContain('1 lead valid; nothing was sent');
    expect(await requestsTo(env.sandbox, 'legacy')).toBe(before);
  });

  it('shows a pending lead with its offers (exit 6) and accepts one (exit 0)', async () => {
    // The key from a file: never on the command line, never printed.
    const keyFile = join(scratchDir('leadctl-key-'), 'campaign.key');
    writeFileSync(keyFile, env.priceRejectKey + '\n', { mode: 0o600 });
    const r = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'price-reject.json'),
      '--api-key-file',
      keyFile,
      '-o',
      'table',
    ]);
    expect(r.code).toBe(6);
    expect(r.stdout + r.stderr).not.toContain(env.priceRejectKey);
    expect(r.stdout).toContain(
      `(price_reject api key ${'*'.repeat(env.priceRejectKey.length - 4)}${env.priceRejectKey.slice(-4)})`,
    );
    expect(r.stderr).not.toContain('--api-key can be read by other users');
    expect(r.stdout).toMatch(/^Pending: the lead awaits a price-reject offer \(lead id \d+\)/);
    expect(r.stdout).toMatch(/│ offer id │ price\s+│ expires at \(local time\)\s+│ expires │/);
    // TZ is America/Chicago for these runs: local time carries its offset, as every time in a table; 900 s reads as 15 minutes.
    expect(r.stdout).toMatch(/│ \d+\s+│ \d+\.\d{2} │ \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} -0[56]:00\s+│ in 1[45]m\s+│/);
    // How to accept one is guidance: on stderr, the answer alone on stdout.
    const offerId = /--offer-id (\d+)/.exec(r.stderr)![1];
    expect(r.stderr).toContain(`Accept one with: leadctl legacy accept-offer --offer-id ${offerId}`);
    expect(r.stdout).not.toContain('accept-offer');

    const accepted = await env.run(
      ['legacy', 'accept-offer', '--api-key-stdin', '--offer-id', offerId!, '-o', 'table'],
      { input: env.priceRejectKey + '\n' },
    );
    expect(accepted.code).toBe(0);
    expect(accepted.stdout).toMatch(/^Accepted \(lead id \d+\)\n {2}Redirect URL: http:\/\/127\.0\.0\.1/);
  });

  it('--api-key still works, with a warning that it shows in ps and history; --api-key-stdin needs stdin free', async () => {
    const r = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'accepted.json'),
      '--api-key',
      env.directKey,
      '--validate-only',
    ]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /Warning: an api key given with --api-key can be read by other users of this machine \(ps\) and stays in your shell history/,
    );
    const clash = await env.run(['legacy', 'post', '-', '--api-key-stdin', '--validate-only'], { input: '{}' });
    expect(clash.code).toBe(2);
    expect(clash.stderr).toContain('--api-key-stdin cannot be used when the leads come from stdin');
    const two = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'accepted.json'),
      '--api-key',
      'a',
      '--api-key-file',
      'f',
    ]);
    expect(two.code).toBe(2);
  });

  it('gives scripts the offers with absolute expiries', async () => {
    const before = Date.now();
    const { offers } = await pendingLead(1);
    const after = Date.now();
    for (const o of offers) {
      expect(o.expires_in).toBe(900);
      // Received between before and after; the expiry is given to the whole second.
      const at = Date.parse(o.expires_at);
      expect(at).toBeGreaterThanOrEqual(before - 1000 + 900_000);
      expect(at).toBeLessThanOrEqual(after + 900_000);
      expect(o.price).toBeLessThan(40);
    }
  });

  it('explains each documented price-reject error with a hint (exit 4)', async () => {
    const { apiKey, offers } = await pendingLead(2);
    const accept = (key: string, id: number | string, format = 'table') =>
      env.run(['legacy', 'accept-offer', '--api-key', key, '--offer-id', String(id), '-o', format]);

    const first = await accept(apiKey, offers[0]!.id);
    expect(first.code).toBe(0);

    const again = await accept(apiKey, offers[0]!.id);
    expect(again.code).toBe(4);
    expect(again.stdout).toContain('  - Accepted price reject offer.\n    Hint: this offer was already accepted');

    const revoked = await accept(apiKey, offers[1]!.id, 'json');
    expect(revoked.code).toBe(4);
    expect(JSON.parse(revoked.stdout)).toMatchObject({
      outcome: 'error',
      status: 'ERROR',
      errors: ['Revoked price reject offer.'],
      hints: ['another offer for this lead was accepted, which withdraws the others'],
    });

    const invalid = await accept(apiKey, 99999);
    expect(invalid.code).toBe(4);
    expect(invalid.stdout).toContain('  - Invalid price reject offer.\n    Hint: no such offer for this api key');

    const notEnabled = await accept(env.directKey, offers[1]!.id);
    expect(notEnabled.code).toBe(4);
    expect(notEnabled.stdout).toContain(
      '  - Price reject not enabled for this campaign.\n    Hint: this campaign does not use price reject',
    );

    const later = await pendingLead(1);
    await env.advance(901);
    const expired = await accept(later.apiKey, later.offers[0]!.id);
    expect(expired.code).toBe(4);
    expect(expired.stdout).toContain(
      '  - Expired price reject offer.\n    Hint: the offer ran out of time: post the lead again to get new offers',
    );

    const badId = await env.run(['legacy', 'accept-offer', '--api-key', apiKey, '--offer-id', 'first']);
    expect(badId.code).toBe(2);
  });

  it('accepts outright on a campaign without price reject', async () => {
    const r = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'price-reject.json'),
      '--api-key',
      env.directKey,
      '-o',
      'json',
    ]);
    expect(r.code).toBe(0);
    const [answer] = JSON.parse(r.stdout);
    expect(answer).toMatchObject({ outcome: 'accepted', result: 'A' });
    expect(answer.price_reject ?? null).toBeNull();
  });

  it('posts NDJSON from stdin one by one, answering with a list', async () => {
    const r = await env.run(['legacy', 'post', '-', '--api-key', env.directKey, '-o', 'json'], {
      input: readFileSync(fixturePath('legacy', 'batch.ndjson'), 'utf8'),
    });
    expect(r.code).toBe(0);
    const answers = JSON.parse(r.stdout) as { lead: number; outcome: string }[];
    expect(answers.map((a) => [a.lead, a.outcome])).toEqual([
      [1, 'accepted'],
      [2, 'accepted'],
    ]);
  });

  it('stamps a missing time_stamp in Central time and drops the query of a long source_url', async () => {
    const lead = {
      ...readFixture('legacy', 'accepted.json'),
      source_url: 'https://apply.example-lender.com/start?' + 'utm_content=banner-a&'.repeat(14),
      email: 'stamp.test@example.com',
    };
    const before = Date.now();
    const r = await env.run(['legacy', 'post', '-', '--api-key', env.directKey, '--stamp', '-o', 'json'], {
      input: JSON.stringify(lead),
    });
    const after = Date.now();
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/Warning: stdin: source_url was \d+ characters \(over 255\): query parameters dropped/);
    const leadId = JSON.parse(r.stdout)[0].lead_id as number;
    const stored = await env.run(['leads', 'get', String(leadId), '--columns', 'time_stamp,source_url', '-o', 'json']);
    const [values] = JSON.parse(stored.stdout);
    expect(values.source_url).toBe('https://apply.example-lender.com/start');
    expect(values.time_stamp).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    // UTC-06:00: the stamp read as -06:00 is the moment of the post, to the whole second.
    const stampedAt = Date.parse(values.time_stamp.replace(' ', 'T') + '-06:00');
    expect(stampedAt).toBeGreaterThanOrEqual(before - 1000);
    expect(stampedAt).toBeLessThanOrEqual(after);
  });
});

describe('legacy post when the connection drops after sending', () => {
  let env: Env;

  beforeAll(async () => {
    env = await startEnv(['--reset-rate', '1']);
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('does not repeat the post, says it may have arrived, and names the leads not sent (exit 5)', async () => {
    const r = await env.run([
      'legacy',
      'post',
      fixturePath('legacy', 'batch.ndjson'),
      '--api-key',
      env.directKey,
      '-o',
      'json',
    ]);
    expect(r.code).toBe(5);
    const doc = JSON.parse(r.stdout);
    expect(doc.error.message).toMatch(/batch\.ndjson, line 1: .*; 1 later lead was not sent/);
    expect(doc.error.hint).toMatch(/may or may not have reached the service and is not repeated automatically/);
    expect(doc.error.details).toMatchObject({ lead: 1, posted: [], not_sent: [2] });
    const stats = await env.sandbox.stats();
    expect(stats.faults.reset).toBe(1);
  });
});
