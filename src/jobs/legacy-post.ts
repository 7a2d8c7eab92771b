import { ExitCode } from '../errors.js';
import {
  LegacyLeadSchema,
  PRICE_REJECT_ERRORS,
  formatZodIssues,
  type FormattedIssue,
  type LegacyResponse,
  type PriceRejectAccept,
} from '../schema/index.js';
import type { LegacyInput } from '../ingest/legacy/input.js';
import { prepareLegacyLead, type PrepareOptions, type PreparedLead } from '../ingest/legacy/prepare.js';

export interface LegacySource {
  legacyPost(body: Record<string, unknown>): Promise<LegacyResponse>;
  priceRejectAccept(body: PriceRejectAccept): Promise<LegacyResponse>;
}

export type LegacyOutcome = 'accepted' | 'rejected' | 'pending' | 'error';

export function outcomeOf(response: LegacyResponse): LegacyOutcome {
  if (response.status !== 'OK') return 'error';
  if (response.result === 'A') return 'accepted';
  if (response.result === 'R') return 'rejected';
  if (response.result === 'P') return 'pending';
  return 'error';
}

/** 0 accepted, 4 rejected or refused, 6 pending; over several leads the worst wins (4 before 6). */
export function legacyExitCode(outcomes: readonly LegacyOutcome[]): number {
  if (outcomes.some((o) => o === 'rejected' || o === 'error')) return ExitCode.REJECTED;
  if (outcomes.some((o) => o === 'pending')) return ExitCode.PENDING;
  return ExitCode.OK;
}

// ---------------------------------------------------------------- local validation

export interface LeadProblem {
  /** 1-based number of the lead in the file. */
  lead: number;
  /** NDJSON line, when known. */
  line?: number;
  path: string;
  message: string;
}

export interface CheckedLeads {
  leads: (PreparedLead & { number: number; line?: number })[];
  problems: LeadProblem[];
}

/** Applies the conveniences to every lead and validates it with the shared schema. */
export function checkLegacyLeads(input: LegacyInput, options: PrepareOptions): CheckedLeads {
  const leads: CheckedLeads['leads'] = [];
  const problems: LeadProblem[] = [];
  for (const raw of input.leads) {
    const prepared = prepareLegacyLead(raw.data, options);
    leads.push({ ...prepared, number: raw.number, line: raw.line });
    for (const issue of validateLegacyLead(prepared.data))
      problems.push({ lead: raw.number, line: raw.line, ...issue });
  }
  return { leads, problems };
}

export function validateLegacyLead(data: Record<string, unknown>): FormattedIssue[] {
  const parsed = LegacyLeadSchema.safeParse(data);
  return parsed.success ? [] : formatZodIssues(parsed.error);
}

/** `income_sources[0].employer_name: required when income_source is 1 (Employed)`, prefixed with where the lead is. */
export function formatLeadProblem(p: LeadProblem, input: Pick<LegacyInput, 'source' | 'shape'>): string {
  const where =
    input.shape === 'object'
      ? input.source
      : input.shape === 'ndjson'
        ? `${input.source}, line ${p.line}`
        : `${input.source}, lead ${p.lead}`;
  return `${where}: ${p.path === '' ? '(the lead)' : p.path}: ${p.message}`;
}

// ---------------------------------------------------------------- price reject follow-up

export interface KnownLegacyError {
  kind: keyof typeof PRICE_REJECT_ERRORS;
  hint: string;
}

const PRICE_REJECT_HINTS: Record<keyof typeof PRICE_REJECT_ERRORS, string> = {
  invalid:
    'no such offer for this api key: use an offer id printed by `leadctl legacy post`, with the price_reject api key printed beside it',
  accepted: 'this offer was already accepted: the lead is sold on it, nothing more to do',
  revoked: 'another offer for this lead was accepted, which withdraws the others',
  expired: 'the offer ran out of time: post the lead again to get new offers',
  notEnabled:
    'this campaign does not use price reject: use the api key of a campaign that does (the one in the pending answer)',
};

/** Recognises the five documented price-reject errors, whatever the spacing or case. */
export function knownPriceRejectError(message: unknown): KnownLegacyError | undefined {
  if (typeof message !== 'string') return undefined;
  const norm = (s: string) => s.trim().toLowerCase().replace(/\.$/, '');
  for (const [kind, text] of Object.entries(PRICE_REJECT_ERRORS) as [keyof typeof PRICE_REJECT_ERRORS, string][]) {
    if (norm(text) === norm(message)) return { kind, hint: PRICE_REJECT_HINTS[kind] };
  }
  return undefined;
}
