import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseLegacyInput } from '../../../src/ingest/legacy/input.js';
import {
  checkLegacyLeads,
  formatLeadProblem,
  knownPriceRejectError,
  legacyExitCode,
  outcomeOf,
  validateLegacyLead,
} from '../../../src/jobs/legacy-post.js';
import { legacyResultRecord, legacyResultText } from '../../../src/cli/views/legacy-result.js';

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), '../../../fixtures/legacy');
const fixture = (name: string) => readFileSync(join(FIXTURES, name), 'utf8');
const now = new Date('2026-03-10T15:00:00Z');

describe('legacy fixtures', () => {
  it.each(['accepted.json', 'suppressed.json', 'price-reject.json'])(
    '%s is a valid lead once it has an api key',
    (name) => {
      const lead = JSON.parse(fixture(name)) as Record<string, unknown>;
      expect(validateLegacyLead({ ...lead, api_key: 'k' })).toEqual([]);
    },
  );

  it('invalid.json fails with messages naming the path and the rule in words', () => {
    const input = parseLegacyInput(fixture('invalid.json'), 'invalid.json');
    const { problems } = checkLegacyLeads(input, { apiKeyFlag: 'k', stamp: false, now });
    const lines = problems.map((p) => formatLeadProblem(p, input));
    expect(lines).toContain(
      'invalid.json: income_sources[0].employer_name: required when income_source is 1 (Employed)',
    );
    expect(lines).toContain(
      'invalid.json: income_sources[0].months_at_job: required when income_source is 1 (Employed)',
    );
    expect(lines).toContain('invalid.json: social_security_number: must be exactly 9 digits with no delimiters');
    expect(lines).toContain('invalid.json: date_of_birth: is not a real calendar date');
    expect(
      lines.some((l) => l.startsWith('invalid.json: rent_or_own: must be one of 1 (Rent), 2 (Own), 3 (Other)')),
    ).toBe(true);
    expect(lines.some((l) => l.startsWith('invalid.json: email: '))).toBe(true);
    expect(lines.some((l) => l.startsWith('invalid.json: home_phone: '))).toBe(true);
  });
});

describe('checkLegacyLeads', () => {
  it('names the NDJSON line of each problem, and asks for an api key when there is none', () => {
    const ok = JSON.parse(fixture('accepted.json')) as Record<string, unknown>;
    const text = `${JSON.stringify(ok)}\n${JSON.stringify({ ...ok, zip: '7520' })}\n`;
    const input = parseLegacyInput(text, 'leads.ndjson');
    const { leads, problems } = checkLegacyLeads(input, { stamp: false, now });
    expect(leads).toHaveLength(2);
    expect(problems.map((p) => formatLeadProblem(p, input))).toEqual([
      'leads.ndjson, line 1: api_key: required when campaign_code is absent',
      'leads.ndjson, line 1: campaign_code: required when api_key is absent',
      'leads.ndjson, line 2: zip: must be a 5-digit ZIP code (or 9 digits for ZIP+4) with no delimiters',
      'leads.ndjson, line 2: api_key: required when campaign_code is absent',
      'leads.ndjson, line 2: campaign_code: required when api_key is absent',
    ]);
  });

  it('stamps, shortens the source_url and validates the result', () => {
    const lead = JSON.parse(fixture('accepted.json')) as Record<string, unknown>;
    const long = 'https://apply.example-lender.com/start?' + 'utm_term=x&'.repeat(30);
    const input = parseLegacyInput(JSON.stringify([{ ...lead, source_url: long }]), 'a.json');
    const { leads, problems } = checkLegacyLeads(input, { apiKeyEnv: 'env-key', stamp: true, now });
    expect(problems).toEqual([]);
    expect(leads[0]!.data).toMatchObject({
      api_key: 'env-key',
      time_stamp: '2026-03-10 09:00:00',
      source_url: 'https://apply.example-lender.com/start',
    });
    expect(leads[0]!.notes).toHaveLength(2);
  });
});

describe('outcomes and exit codes', () => {
  it('maps answers to outcomes', () => {
    expect(outcomeOf({ status: 'OK', result: 'A' })).toBe('accepted');
    expect(outcomeOf({ status: 'OK', result: 'R' })).toBe('rejected');
    expect(outcomeOf({ status: 'OK', result: 'P' })).toBe('pending');
    expect(outcomeOf({ status: 'ERROR', errors: ['x'] })).toBe('error');
    expect(outcomeOf({ status: 'OK', result: 'Z' })).toBe('error');
  });
  it('0 accepted, 4 rejected or error, 6 pending; the worst wins, 4 before 6', () => {
    expect(legacyExitCode(['accepted'])).toBe(0);
    expect(legacyExitCode(['rejected'])).toBe(4);
    expect(legacyExitCode(['error'])).toBe(4);
    expect(legacyExitCode(['accepted', 'pending'])).toBe(6);
    expect(legacyExitCode(['pending', 'rejected'])).toBe(4);
  });
  it('recognises each documented price-reject error with a hint', () => {
    expect(knownPriceRejectError('Expired price reject offer.')?.hint).toMatch(/post the lead again/);
    expect(knownPriceRejectError('Revoked price reject offer.')?.hint).toMatch(/another offer .* was accepted/);
    expect(knownPriceRejectError('Accepted price reject offer.')?.kind).toBe('accepted');
    expect(knownPriceRejectError('Invalid price reject offer.')?.kind).toBe('invalid');
    expect(knownPriceRejectError('price reject not enabled for this campaign')?.kind).toBe('notEnabled');
    expect(knownPriceRejectError('Something else.')).toBeUndefined();
    expect(knownPriceRejectError({ field: 'x' })).toBeUndefined();
  });
});

describe('result rendering', () => {
  const pending = {
    status: 'OK',
    result: 'P',
    redirect_url: null,
    price_reject: {
      api_key: 'PRKEY',
      offers: [
        { id: 11, price: 32, expires_in: 900 },
        { id: 12, price: 28.5, expires_in: 600 },
      ],
    },
  };

  it('shows pending offers with their expiry (an instant the table shows in the local zone) and time left, and how to accept one', () => {
    const text = legacyResultText(pending, { receivedAt: now, now });
    // The campaign's key is a secret: its last four only.
    expect(text.head).toBe('Pending: the lead awaits a price-reject offer\n  2 offers (price_reject api key *RKEY):\n');
    expect(text.offers).toEqual([
      { id: 11, price: '32.00', expires_at: '2026-03-10T15:15:00Z', expires: 'in 15m' },
      { id: 12, price: '28.50', expires_at: '2026-03-10T15:10:00Z', expires: 'in 10m' },
    ]);
    expect(text.tail).toBe(
      "  Accept one with: leadctl legacy accept-offer --offer-id 11   (the campaign's key in LEADCTL_API_KEY or --api-key-file)\n",
    );
    expect(text.head + text.tail).not.toContain('PRKEY');
  });

  it('quotes errors verbatim with hints, and shows the redirect of an accepted lead', () => {
    expect(
      legacyResultText({ status: 'ERROR', errors: ['Expired price reject offer.'] }, { receivedAt: now, now }).head,
    ).toBe(
      'Refused by the service (status ERROR)\n  - Expired price reject offer.\n    Hint: the offer ran out of time: post the lead again to get new offers\n',
    );
    expect(
      legacyResultText(
        { status: 'OK', result: 'A', redirect_url: 'https://x.example/r/1' },
        { receivedAt: now, now, title: 'Lead 2' },
      ).head,
    ).toBe('Lead 2: Accepted\n  Redirect URL: https://x.example/r/1\n');
  });

  it('gives scripts absolute expiries and the hints', () => {
    expect(legacyResultRecord(pending, now).price_reject!.offers[0]).toEqual({
      id: 11,
      price: 32,
      expires_in: 900,
      expires_at: '2026-03-10T15:15:00Z',
    });
    expect(legacyResultRecord(pending, now).price_reject!.api_key).toBe('*RKEY');
    expect(legacyResultRecord({ status: 'ERROR', errors: ['Revoked price reject offer.'] }, now)).toMatchObject({
      outcome: 'error',
      result: null,
      hints: [expect.stringMatching(/another offer/)],
    });
  });
});

describe('the service quoting a lead back', () => {
  it('shows an SSN or account number in its errors by the last four, in the text and the record', () => {
    const now = new Date('2026-11-20T10:00:00Z');
    const answer = {
      status: 'ERROR',
      errors: ['ssn 219457781 is on a do-not-lend list', { field: 'bank_account_number', value: '000123456789' }],
    };
    const text = legacyResultText(answer as never, { receivedAt: now, now }).head;
    const record = JSON.stringify(legacyResultRecord(answer as never, now));
    for (const shown of [text, record]) {
      expect(shown).not.toMatch(/219457781|000123456789/);
      expect(shown).toContain('*****7781');
      expect(shown).toContain('********6789');
    }
  });
});
