import { basename } from 'node:path';
import type { RejectReason } from './rejects.js';
import type { Signal } from '../../io/io.js';
import { ExitCode, type LeadctlError } from '../../errors.js';

/**
 * What a push did, record by record: every record read ends accepted, rejected (listed in the
 * rejects file), a duplicate (superseded by a later one, also listed), unconfirmed (sent and
 * answered 2xx, but without a verdict per record) or not sent yet (kept for `--resume`). The same object is printed as JSON and drawn as a table.
 */

export type PushStatus =
  | 'completed'
  | 'completed_with_rejects'
  | 'validated'
  | 'validated_with_rejects'
  | 'interrupted'
  | 'service_unavailable'
  | 'authentication_failed'
  | 'failed';

export interface LevelSummary {
  read: number;
  valid: number;
  sent: number;
  accepted: number;
  rejected: number;
  duplicates: number;
  /** Sent, answered 2xx without per-record detail: neither known accepted nor known rejected. */
  unconfirmed: number;
  /** Valid, and the same as the service last acknowledged (`--changed-only`): not sent. */
  unchanged: number;
  not_sent: number;
}

export interface PushSummary {
  command: string;
  status: PushStatus;
  validate_only: boolean;
  resumed: boolean;
  rows_read: number;
  customers: LevelSummary;
  loans: LevelSummary;
  payments: LevelSummary;
  duplicates: number;
  requests: { total: number; sent: number; acknowledged_before: number; not_sent: number };
  retries: number;
  elapsed_seconds: number;
  rows_per_second: number;
  rejects_file: string | null;
  rejects: number;
  /** The rejects of this run grouped by kind, most frequent first, each with its first record. */
  reasons?: RejectReason[];
  journal: string | null;
  exit_code: number;
  error?: { code: string; message: string; hint?: string };
  /** Set when the run used the record of what was sent before (`--changed-only`, `--full`). */
  delta?: {
    mode: 'changed-only' | 'full';
    max_age_days: number;
    record: string | null;
    /** Of the unchanged customers, those known unchanged from their raw rows, never converted nor checked. */
    unchanged_raw: number;
  };
  /** Things the operator should know about this run (e.g. an unsorted export was staged). */
  notes?: string[];
  /** Every record read, accounted for at each level (see `accountFor`). */
  accounting: Accounting;
}

export interface Accounting {
  /** read = accepted + rejected + duplicates + unconfirmed + unchanged + not_sent (+ valid not unchanged, when nothing is sent). */
  balanced: boolean;
  customers: { read: number; accounted_for: number };
  loans: { read: number; accounted_for: number };
  payments: { read: number; accounted_for: number };
}

/** Where each record read ended: one outcome each, so the outcomes add up to what was read. */
function accountedFor(l: LevelSummary, validateOnly: boolean): number {
  return (
    l.accepted +
    l.rejected +
    l.duplicates +
    l.unconfirmed +
    l.unchanged +
    l.not_sent +
    (validateOnly ? l.valid - l.unchanged - l.sent : 0)
  );
}

/**
 * The accounting invariant, checked on every summary: a run that completes with counts that do not
 * add up has lost records somewhere, which is a bug of ours (exit 1), never a success.
 */
export function accountFor(summary: Omit<PushSummary, 'accounting'>): PushSummary {
  const level = (l: LevelSummary) => ({ read: l.read, accounted_for: accountedFor(l, summary.validate_only) });
  const accounting: Accounting = {
    balanced: true,
    customers: level(summary.customers),
    loans: level(summary.loans),
    payments: level(summary.payments),
  };
  const off = (['customers', 'loans', 'payments'] as const).filter(
    (k) => accounting[k].read !== accounting[k].accounted_for,
  );
  accounting.balanced = off.length === 0;
  const succeeded = summary.exit_code === ExitCode.OK || summary.exit_code === ExitCode.REJECTED;
  if (accounting.balanced || !succeeded) return { ...summary, accounting };
  const detail = off
    .map((k) => `${k}: ${accounting[k].read} read, ${accounting[k].accounted_for} accounted for`)
    .join('; ');
  return {
    ...summary,
    accounting,
    status: 'failed',
    exit_code: ExitCode.UNEXPECTED,
    error: {
      code: 'internal',
      message: `the counts of this run do not add up (${detail}): a bug in leadctl`,
      hint: 'keep the input and this summary, and report it; check the service for what arrived before rerunning',
    },
  };
}

/** Why a run stopped before the end: a signal, refused credentials, a service that stayed down, or an unexpected error. */
export type StopReason =
  | { kind: 'signal'; signal: Signal }
  | { kind: 'auth' | 'service' | 'failed'; error: LeadctlError };

/** The run's status and exit code: how it stopped, else whether anything was rejected. */
export function outcomeOf(
  stop: StopReason | undefined,
  validateOnly: boolean,
  rejectedAny: boolean,
): { status: PushStatus; exitCode: number; error?: PushSummary['error'] } {
  if (stop?.kind === 'signal')
    return { status: 'interrupted', exitCode: stop.signal === 'SIGINT' ? ExitCode.SIGINT : ExitCode.SIGTERM };
  if (stop !== undefined) {
    const error = {
      code: stop.error.code,
      message: stop.error.message,
      ...(stop.error.hint ? { hint: stop.error.hint } : {}),
    };
    if (stop.kind === 'auth') return { status: 'authentication_failed', exitCode: ExitCode.AUTH, error };
    return { status: stop.kind === 'failed' ? 'failed' : 'service_unavailable', exitCode: stop.error.exitCode, error };
  }
  const exitCode = rejectedAny ? ExitCode.REJECTED : ExitCode.OK;
  if (validateOnly) return { status: rejectedAny ? 'validated_with_rejects' : 'validated', exitCode };
  return { status: rejectedAny ? 'completed_with_rejects' : 'completed', exitCode };
}

const STATUS_WORDS: Record<PushStatus, string> = {
  completed: 'completed: everything was accepted',
  completed_with_rejects: 'completed, with rejected records (see the rejects file)',
  validated: 'validated: everything would be sent (nothing was sent)',
  validated_with_rejects: 'validated, with records that would be rejected (nothing was sent)',
  interrupted: 'interrupted: rerun with --resume to send the rest',
  service_unavailable: 'stopped: the service stayed unavailable; rerun with --resume to send the rest',
  authentication_failed: 'stopped: authentication failed; fix the credentials and rerun with --resume',
  failed:
    'failed: an error stopped the run (below); what the service acknowledged is counted here and kept in the journal',
};

/** The same, for a push without a journal (one request per record: no --resume to offer). */
const STATUS_WORDS_NO_JOURNAL: Partial<Record<PushStatus, string>> = {
  interrupted:
    'interrupted: the records not sent (or not answered) are counted below; run the same input again to send them (upserts are safe to repeat)',
  service_unavailable:
    'stopped: the service stayed unavailable; the records not sent (or not answered) are counted below; run the same input again later (upserts are safe to repeat)',
  authentication_failed: 'stopped: authentication failed; fix the credentials and run the command again',
  failed: 'failed: an error stopped the run (below); what the service acknowledged is counted here',
};

export function statusWords(
  s: Pick<PushSummary, 'status' | 'journal' | 'validate_only' | 'customers' | 'loans' | 'payments' | 'delta'>,
): string {
  const unchanged = s.customers.unchanged;
  if (unchanged > 0 && s.customers.unconfirmed === 0 && (s.status === 'validated' || s.status === 'completed')) {
    const n = (x: number) => x.toLocaleString('en-US');
    const changed = s.customers.valid - unchanged;
    const what = `${n(unchanged)} customer${unchanged === 1 ? '' : 's'} unchanged since the last acknowledged send`;
    if (changed === 0)
      return `${s.status}: nothing changed, nothing ${s.validate_only ? 'would be' : 'was'} sent (${what})`;
    return s.validate_only
      ? `validated: ${n(changed)} changed customer(s) would be sent; ${what} (nothing was sent)`
      : `completed: ${n(changed)} changed customer(s) sent; ${what}`;
  }
  const unconfirmed = s.customers.unconfirmed + s.loans.unconfirmed + s.payments.unconfirmed;
  if (unconfirmed > 0 && s.status === 'completed')
    return 'completed: everything was sent; the service did not confirm every record (see unconfirmed)';
  if (unconfirmed > 0 && s.status === 'completed_with_rejects')
    return 'completed, with rejected records (see the rejects file) and records the service did not confirm (see unconfirmed)';
  return (
    (s.journal === null && !s.validate_only ? STATUS_WORDS_NO_JOURNAL[s.status] : undefined) ?? STATUS_WORDS[s.status]
  );
}

/** Reasons shown in a summary; the rest are counted in one line (the rejects file has them all). */
const SHOWN_REASONS = 10;

/** "rejected, by reason": count, the kind of reason, and the first record as an example. */
export function renderReasons(reasons: readonly RejectReason[]): string[] {
  const shown = reasons.slice(0, SHOWN_REASONS);
  const width = Math.max(...shown.map((r) => r.count.toLocaleString('en-US').length));
  const out = ['rejected, by reason (first of each):'];
  for (const r of shown) {
    const e = r.example;
    const ids = [
      e.customer_id && `customer ${e.customer_id}`,
      e.loan_id && `loan ${e.loan_id}`,
      e.payment_id && `payment ${e.payment_id}`,
    ]
      .filter(Boolean)
      .join(', ');
    out.push(`  ${r.count.toLocaleString('en-US').padStart(width)}  ${r.reason}`);
    out.push(
      `  ${''.padStart(width)}    e.g. ${e.source_file ? `${basename(e.source_file)} ` : ''}row ${e.row}${ids ? ` (${ids})` : ''}: ${e.reason}`,
    );
  }
  const rest = reasons.slice(SHOWN_REASONS);
  if (rest.length) {
    const count = rest.reduce((n, r) => n + r.count, 0);
    out.push(
      `  ${count.toLocaleString('en-US').padStart(width)}  more, for ${rest.length} other reason${rest.length === 1 ? '' : 's'} (in the rejects file)`,
    );
  }
  return out;
}

/** A plain table for people (stdout), then the totals and where the files are. */
export function renderSummary(s: PushSummary): string {
  const levels: [string, LevelSummary][] = [
    ['customers', s.customers],
    ['loans', s.loans],
    ['payments', s.payments],
  ];
  // The column appears only when the service left records unconfirmed: a run that says nothing of it has none.
  const showUnconfirmed = levels.some(([, l]) => l.unconfirmed > 0);
  const showUnchanged = s.delta?.mode === 'changed-only' || levels.some(([, l]) => l.unchanged > 0);
  const headers = [
    '',
    'read',
    'valid',
    ...(showUnchanged ? ['unchanged'] : []),
    s.validate_only ? 'would send' : 'sent',
    'accepted',
    'rejected',
    'duplicates',
    ...(showUnconfirmed ? ['unconfirmed'] : []),
    'not sent',
  ];
  const rows = levels.map(([name, l]) =>
    [
      name,
      l.read,
      l.valid,
      ...(showUnchanged ? [l.unchanged] : []),
      s.validate_only ? l.valid - l.unchanged : l.sent,
      l.accepted,
      l.rejected,
      l.duplicates,
      ...(showUnconfirmed ? [l.unconfirmed] : []),
      l.not_sent,
    ].map((v) => (typeof v === 'number' ? v.toLocaleString('en-US') : v)),
  );
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  const out: string[] = [];
  out.push(`${s.command}: ${statusWords(s)}`);
  out.push('');
  out.push(line(headers));
  for (const r of rows) out.push(line(r.map(String)));
  out.push('');
  const requests = s.validate_only
    ? `${s.requests.total.toLocaleString('en-US')} would be sent`
    : `${s.requests.sent.toLocaleString('en-US')} sent` +
      (s.requests.acknowledged_before
        ? `, ${s.requests.acknowledged_before.toLocaleString('en-US')} acknowledged in an earlier run`
        : '') +
      (s.requests.not_sent ? `, ${s.requests.not_sent.toLocaleString('en-US')} not sent` : '') +
      ` (of ${s.requests.total.toLocaleString('en-US')})`;
  out.push(`rows read      ${s.rows_read.toLocaleString('en-US')}`);
  out.push(`requests       ${requests}`);
  out.push(`retries        ${s.retries.toLocaleString('en-US')}`);
  out.push(`elapsed        ${s.elapsed_seconds.toFixed(1)} s (${s.rows_per_second.toLocaleString('en-US')} rows/s)`);
  if (s.delta)
    out.push(
      `delta          ${s.delta.mode === 'full' ? 'everything sent; the record of what was sent is refreshed' : `only what changed since the last acknowledged send, or was last sent over ${s.delta.max_age_days} day${s.delta.max_age_days === 1 ? '' : 's'} ago`}${s.delta.unchanged_raw ? ` (${s.delta.unchanged_raw.toLocaleString('en-US')} unchanged customer${s.delta.unchanged_raw === 1 ? '' : 's'} known from their raw rows, not converted)` : ''}`,
    );
  if (s.reasons?.length) {
    out.push(...renderReasons(s.reasons));
    out.push('');
  }
  if (s.rejects_file)
    out.push(
      `rejects file   ${s.rejects_file} (${s.rejects.toLocaleString('en-US')} line${s.rejects === 1 ? '' : 's'}${s.reasons?.length ? ': every record, row by row' : ''})`,
    );
  if (s.journal && s.status !== 'completed' && s.status !== 'completed_with_rejects')
    out.push(`journal        ${s.journal}`);
  if (s.error) out.push(`error          ${s.error.message}`);
  for (const note of s.notes ?? []) out.push(`note           ${note}`);
  return out.join('\n') + '\n';
}
