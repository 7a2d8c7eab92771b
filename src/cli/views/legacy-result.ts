import { maskedBody, serviceProse } from '../../api/errors.js';
import { maskAllButLast } from '../../io/mask.js';
import type { LegacyResponse } from '../../schema/index.js';
import { knownPriceRejectError, outcomeOf, type LegacyOutcome } from '../../jobs/legacy-post.js';
import { offerRecords, offerRows, type OfferRecord, type OfferRow } from '../../output/offers.js';

/** A lead post or price-reject answer, for scripts: the service's fields plus outcome, hints and absolute expiries. */
export interface LegacyResultRecord {
  lead?: number;
  /** The service's id of the lead, when the answer carries one (the sandbox's does). */
  lead_id?: number;
  outcome: LegacyOutcome;
  status: string;
  result: string | null;
  redirect_url: string | null;
  errors: unknown[] | null;
  hints?: (string | null)[];
  price_reject?: { api_key: string; offers: OfferRecord[] } | null;
}

export function legacyResultRecord(response: LegacyResponse, receivedAt: Date, lead?: number): LegacyResultRecord {
  const outcome = outcomeOf(response);
  const errors = response.errors ?? null;
  const record: LegacyResultRecord = {
    ...(lead !== undefined ? { lead } : {}),
    ...(typeof response.lead_id === 'number' ? { lead_id: response.lead_id } : {}),
    outcome,
    status: response.status,
    result: response.result ?? null,
    redirect_url: response.redirect_url ?? null,
    // The service may quote the lead's SSN or account number back in a reason.
    errors: errors === null ? null : (maskedBody(errors) as unknown[]),
  };
  if (errors?.some((e) => knownPriceRejectError(e)))
    record.hints = errors.map((e) => knownPriceRejectError(e)?.hint ?? null);
  if (response.price_reject) {
    // The campaign's key is a secret: only its last four are shown, in JSON as in tables.
    record.price_reject = {
      api_key: maskAllButLast(response.price_reject.api_key, 4),
      offers: offerRecords(response.price_reject.offers, receivedAt),
    };
  }
  return record;
}

export interface HumanResultOptions {
  /** "Lead 2 (line 3)" before the result, when the file held several. */
  title?: string;
  receivedAt: Date;
  now: Date;
}

/** What a person sees: lines before the offers table, the table's rows (if pending), lines after. */
export interface HumanResult {
  head: string;
  offers?: OfferRow[];
  tail: string;
}

const WORDS: Record<LegacyOutcome, string> = {
  accepted: 'Accepted',
  rejected: 'Rejected: the lead was not bought',
  pending: 'Pending: the lead awaits a price-reject offer',
  error: 'Refused by the service',
};

/** The answer as a person reads it; the service's errors are quoted (escaped, personal numbers masked). */
export function legacyResultText(response: LegacyResponse, options: HumanResultOptions): HumanResult {
  const outcome = outcomeOf(response);
  const lines: string[] = [];
  const head = options.title ? `${options.title}: ` : '';
  if (outcome === 'error' && response.status === 'OK') {
    lines.push(`${head}Unexpected answer: status OK with result ${JSON.stringify(response.result ?? null)}`);
  } else {
    const id = typeof response.lead_id === 'number' ? ` (lead id ${response.lead_id})` : '';
    lines.push(`${head}${WORDS[outcome]}${outcome === 'error' ? ` (status ${response.status})` : id}`);
  }
  if (outcome === 'accepted') lines.push(`  Redirect URL: ${response.redirect_url ?? '(none given)'}`);
  for (const error of response.errors ?? []) {
    lines.push(`  - ${serviceProse(typeof error === 'string' ? error : JSON.stringify(error))}`);
    const known = knownPriceRejectError(error);
    if (known) lines.push(`    Hint: ${known.hint}`);
  }
  if (outcome !== 'pending' || !response.price_reject) return { head: lines.join('\n') + '\n', tail: '' };
  const pr = response.price_reject;
  const offers = offerRows(pr.offers, options.receivedAt, options.now);
  if (offers.length === 0) return { head: lines.join('\n') + '\n  No offers were made.\n', tail: '' };
  lines.push(
    `  ${offers.length} offer${offers.length === 1 ? '' : 's'} (price_reject api key ${maskAllButLast(pr.api_key, 4)}):`,
  );
  return {
    head: lines.join('\n') + '\n',
    offers,
    tail: `  Accept one with: leadctl legacy accept-offer --offer-id ${offers[0]!.id}   (the campaign's key in LEADCTL_API_KEY or --api-key-file)\n`,
  };
}
