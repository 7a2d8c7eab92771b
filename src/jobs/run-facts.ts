import { createReadStream, statSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { hashFile } from '../ingest/stamp.js';
import { TableReader } from '../ingest/table/reader.js';
import type {
  AccountingFact,
  DeltaFact,
  InputFact,
  ReasonFact,
  RecordCount,
  RejectsFact,
  RunFacts,
} from '../output/run-report.js';
import type { DryRunBulkSummary } from './dry-run-bulk.js';
import type { ListUploadResult } from './list-upload.js';
import { maskLongNumbers } from '../io/mask.js';
import { reasonKind, type RejectReason } from './push/rejects.js';
import { statusWords, type LevelSummary, type PushSummary } from './push/summary.js';
import type { RunRecorder } from './run-record.js';
import { EXAMPLES_PER_REASON } from './run-record.js';
import { count } from '../output/words.js';

/**
 * Each command's own summary (a push's JSON summary, a list upload's result, a bulk dry run's
 * counts) put in the one shape the report and the metrics are drawn from. Nothing here reaches
 * into a running job: it reads the summary, the recorder, and the files the run left (the
 * rejects file, for more examples than the summary keeps).
 */

/** Reasons shown in the report; the rest are counted in one line (the rejects file has them all). */
export const SHOWN_REASONS = 20;
/** An example longer than this is cut (a reason may quote a whole row). */
const EXAMPLE_CHARS = 300;

/** Where the run went, and what it read. */
export interface RunContext {
  command: string;
  target: { profile: string; baseUrl: string; production: boolean } | undefined;
  /** Input paths as the user gave them (`-`: standard input). */
  inputs: string[];
  cwd: string;
  recorder: RunRecorder;
  /** Hash inputs the run did not hash itself (only the report shows hashes). */
  hashInputs: boolean;
}

type Common = Pick<RunFacts, 'command' | 'profile' | 'baseUrl' | 'production'>;

function common(run: RunContext): Common {
  return {
    command: run.command,
    profile: run.target?.profile ?? null,
    baseUrl: run.target ? withoutUserInfo(run.target.baseUrl) : null,
    production: run.target?.production ?? false,
  };
}

function withoutUserInfo(url: string): string {
  try {
    const u = new URL(url);
    if (!u.username && !u.password) return url;
    u.username = '';
    u.password = '';
    return u.toString().replace(/\/$/, '');
  } catch {
    return url;
  }
}

/** Name, size, rows and SHA-256 of each input: the hash the run took while reading, else taken now (when asked). */
export async function inputFacts(run: RunContext, rows: number | null): Promise<InputFact[]> {
  const facts: InputFact[] = [];
  for (const path of run.inputs) {
    const single = run.inputs.length === 1 ? rows : null;
    if (path === '-') {
      facts.push({ name: 'stdin', bytes: null, rows: single, sha256: null, hashed: null });
      continue;
    }
    const full = resolve(run.cwd, path);
    let bytes: number | null = null;
    try {
      const info = statSync(full);
      if (info.isFile()) bytes = info.size;
    } catch {
      // gone since, or never there: the error of the run says so
    }
    let sha256 = run.recorder.hashOf(path) ?? null;
    let hashed: InputFact['hashed'] = sha256 ? 'during the run' : null;
    if (!sha256 && bytes !== null && run.hashInputs) {
      try {
        const hash = (await import('node:crypto')).createHash('sha256');
        await hashFile(full, hash);
        sha256 = hash.digest('hex');
        hashed = 'after the run';
      } catch {
        // unreadable now: no hash rather than no report
      }
    }
    facts.push({ name: path, bytes, rows: single, sha256, hashed });
  }
  return facts;
}

function example(text: string): string {
  const masked = maskLongNumbers(text);
  return masked.length > EXAMPLE_CHARS ? `${masked.slice(0, EXAMPLE_CHARS - 1)}…` : masked;
}

// ---- a push ------------------------------------------------------------------------------------

const LEVELS = ['customers', 'loans', 'payments'] as const;
const OUTCOMES = [
  'read',
  'valid',
  'sent',
  'accepted',
  'rejected',
  'duplicates',
  'unconfirmed',
  'unchanged',
  'not_sent',
] as const;

export async function pushFacts(summary: PushSummary, run: RunContext): Promise<RunFacts> {
  const level = (k: (typeof LEVELS)[number]): LevelSummary => summary[k];
  const parts: AccountingFact['parts'] = [];
  const part = (label: string, pick: (l: LevelSummary) => number, always = false) => {
    const values = LEVELS.map((k) => pick(level(k)));
    if (always || values.some((v) => v !== 0)) parts.push({ label, values });
  };
  part('accepted', (l) => l.accepted, !summary.validate_only);
  if (summary.validate_only) part('would be sent', (l) => l.valid - l.unchanged - l.sent, true);
  part('rejected', (l) => l.rejected, true);
  part('duplicates', (l) => l.duplicates);
  part('unconfirmed', (l) => l.unconfirmed);
  part('unchanged', (l) => l.unchanged);
  part('not sent', (l) => l.not_sent);
  const accounting: AccountingFact = {
    balanced: summary.accounting.balanced,
    levels: [...LEVELS],
    read: LEVELS.map((k) => level(k).read),
    parts,
    accountedFor: LEVELS.map((k) => summary.accounting[k].accounted_for),
  };
  const records: RecordCount[] = [];
  for (const kind of LEVELS)
    for (const outcome of OUTCOMES) records.push({ kind, outcome, count: level(kind)[outcome] });
  const c = summary.customers;
  const delta: DeltaFact | null = summary.delta
    ? {
        description:
          summary.delta.mode === 'full'
            ? 'every customer sent; the record of what was sent is refreshed (--full)'
            : `only customers that changed since the service last acknowledged them, or were last sent over ${summary.delta.max_age_days} day${summary.delta.max_age_days === 1 ? '' : 's'} ago (--changed-only)`,
        sent: summary.validate_only ? c.valid - c.unchanged : c.sent,
        unchanged: c.unchanged,
        sentLabel: summary.validate_only ? 'customers that would be sent' : 'customers sent',
        unchangedLabel: 'customers unchanged (not sent)',
      }
    : null;
  const files = [
    ...(summary.rejects_file ? [{ label: 'rejects file', path: summary.rejects_file }] : []),
    ...(summary.journal ? [{ label: 'journal', path: summary.journal }] : []),
    ...(summary.delta?.record ? [{ label: 'record of what was sent', path: summary.delta.record }] : []),
  ];
  return {
    ...common(run),
    status: summary.status,
    statusWords: statusWords(summary),
    exitCode: summary.exit_code,
    ...(summary.error
      ? { error: { message: summary.error.message, ...(summary.error.hint ? { hint: summary.error.hint } : {}) } }
      : {}),
    validateOnly: summary.validate_only,
    inputs: await inputFacts(run, summary.rows_read),
    rowsRead: summary.rows_read,
    accounting,
    rejects: await pushRejects(summary),
    delta,
    records,
    unit: run.command === 'customers batch' ? 'customers' : 'records',
    files,
    notes: summary.notes ?? [],
  };
}

function pushExample(e: RejectReason['example']): string {
  const ids = [
    e.customer_id && `customer ${e.customer_id}`,
    e.loan_id && `loan ${e.loan_id}`,
    e.payment_id && `payment ${e.payment_id}`,
  ]
    .filter(Boolean)
    .join(', ');
  return example(
    `${e.source_file ? `${basename(e.source_file)} ` : ''}row ${e.row}${ids ? ` (${ids})` : ''}: ${e.reason}`,
  );
}

/** The summary's reasons, with further examples of each from the rejects file. */
async function pushRejects(summary: PushSummary): Promise<RejectsFact | null> {
  const reasons = summary.reasons ?? [];
  if (summary.rejects === 0 && reasons.length === 0) return null;
  const shown = reasons.filter((r) => r.reason !== 'other reasons').slice(0, SHOWN_REASONS);
  const facts: ReasonFact[] = shown.map((r) => ({
    reason: r.reason,
    count: r.count,
    examples: [pushExample(r.example)],
  }));
  if (summary.rejects_file) await moreExamples(summary.rejects_file, facts, shown);
  const shownCount = facts.reduce((n, r) => n + r.count, 0);
  const total = Math.max(summary.rejects, shownCount);
  return {
    title: summary.validate_only ? 'Would be rejected, by reason' : 'Rejected, by reason',
    total,
    reasons: facts,
    otherCount: total - shownCount,
    otherReasons: reasons.filter((r) => r.reason !== 'other reasons').length - shown.length,
    otherReasonsOrMore: reasons.some((r) => r.reason === 'other reasons'),
    everyOne: 'every one is in the rejects file',
  };
}

/**
 * Reads the rejects file until every reason shown has its examples (or to its end): the same
 * grouping as the summary's, so each line lands with its reason.
 */
async function moreExamples(path: string, facts: ReasonFact[], shown: RejectReason[]): Promise<void> {
  const byKind = new Map(facts.map((f) => [f.reason, f]));
  const firsts = new Map(shown.map((r) => [r.reason, r.example]));
  let wanting = facts.filter((f) => f.examples.length < EXAMPLES_PER_REASON).length;
  if (wanting === 0) return;
  const stream = createReadStream(path, { encoding: 'utf8' });
  try {
    for await (const line of rejectsLines(stream, path)) {
      const kind = reasonKind(line.field || undefined, line.reason ?? '');
      const fact = byKind.get(kind);
      if (!fact || fact.examples.length >= EXAMPLES_PER_REASON) continue;
      const first = firsts.get(kind);
      // The summary's example is the first of its kind: do not show it twice.
      if (first && first.row === Number(line.row) && first.reason === line.reason) continue;
      fact.examples.push(
        pushExample({
          source_file: line.source_file ?? '',
          row: Number(line.row),
          customer_id: line.customer_id || null,
          loan_id: line.loan_id || null,
          payment_id: line.payment_id || null,
          field: line.field || null,
          reason: line.reason ?? '',
        }),
      );
      if (fact.examples.length >= EXAMPLES_PER_REASON && --wanting === 0) break;
    }
  } catch {
    // The file is the run's own; if it cannot be read now, the summary's one example each stands.
  } finally {
    stream.destroy();
  }
}

/** The rejects file's lines as objects keyed by its header, read by the one table reader. */
async function* rejectsLines(stream: AsyncIterable<unknown>, file: string): AsyncGenerator<Record<string, string>> {
  const reader = new TableReader({ delimiter: ',', file });
  let header: string[] | undefined;
  let lines: Record<string, string>[] = [];
  const take = (cells: string[]) => {
    if (!header) {
      header = cells.map((c) => c.replace(/^\uFEFF/, ''));
      return;
    }
    if (cells.length === 1 && cells[0] === '') return;
    const names = header;
    lines.push(Object.fromEntries(names.map((name, i) => [name, cells[i] ?? ''])));
  };
  for await (const chunk of stream) {
    reader.write(chunk as string, take);
    const ready = lines;
    lines = [];
    yield* ready;
  }
  reader.end(take);
  yield* lines;
}

// ---- a list upload -----------------------------------------------------------------------------

const LIST_STATUS: Record<ListUploadResult['outcome'], (r: ListUploadResult) => string> = {
  uploaded: (r) => `uploaded: ${count(r.summary.uploaded, 'value')} to list ${r.summary.list_id} ("${r.summary.name}")`,
  validated: (r) => `validated: ${count(r.summary.distinct, 'value')} would be uploaded (nothing was sent)`,
  invalid: (r) =>
    `not uploaded: ${count(r.problemCount, 'invalid row')} (fix ${r.problemCount === 1 ? 'it' : 'them'}, or use --skip-invalid)`,
  empty: () => 'not uploaded: no valid values',
  refused: (r) => `refused by the service${r.serviceMessage ? ` (${r.serviceMessage})` : ''}: nothing was stored`,
};

export async function listFacts(
  result: ListUploadResult,
  exitCode: number,
  run: RunContext,
  error?: RunFacts['error'],
): Promise<RunFacts> {
  const s = result.summary;
  const accounting: AccountingFact = {
    balanced: s.accounting?.balanced ?? s.rows_read === s.blank + s.valid + s.rejected,
    levels: ['rows'],
    read: [s.rows_read],
    parts: [
      { label: 'valid', values: [s.valid] },
      { label: 'rejected', values: [s.rejected] },
      { label: 'blank', values: [s.blank] },
    ],
    accountedFor: [s.accounting?.accounted_for ?? s.blank + s.valid + s.rejected],
  };
  const records: RecordCount[] = [
    { kind: 'rows', outcome: 'read', count: s.rows_read },
    { kind: 'rows', outcome: 'blank', count: s.blank },
    { kind: 'rows', outcome: 'valid', count: s.valid },
    { kind: 'rows', outcome: 'rejected', count: s.rejected },
    { kind: 'values', outcome: 'distinct', count: s.distinct },
    { kind: 'values', outcome: 'duplicates', count: s.duplicates },
    { kind: 'values', outcome: 'normalised', count: s.normalised },
    { kind: 'values', outcome: 'uploaded', count: s.uploaded },
  ];
  const reasons: ReasonFact[] = result.reasons.slice(0, SHOWN_REASONS).map((r) => {
    const own = result.problems.filter((p) => p.reason === r.reason || p.reason.startsWith(`${r.reason} (`));
    const list = own.length ? own : [r.example];
    return {
      reason: r.reason,
      count: r.count,
      examples: list
        .slice(0, EXAMPLES_PER_REASON)
        .map((p) =>
          example(`${p.row === undefined ? '' : `row ${p.row}: `}${p.value ? `${p.value} — ` : ''}${p.reason}`),
        ),
    };
  });
  const shownCount = reasons.reduce((n, r) => n + r.count, 0);
  const changes = s.changes;
  return {
    ...common(run),
    status: result.outcome,
    statusWords: LIST_STATUS[result.outcome](result),
    exitCode,
    ...(error ? { error } : {}),
    validateOnly: s.validate_only,
    inputs: await inputFacts(run, s.rows_read),
    rowsRead: s.rows_read,
    accounting,
    rejects:
      result.problemCount > 0
        ? {
            title: result.outcome === 'refused' ? 'Refused by the service, by reason' : 'Invalid rows, by reason',
            total: result.problemCount,
            reasons,
            otherCount: Math.max(0, result.problemCount - shownCount),
            otherReasons: Math.max(0, result.reasons.length - reasons.length),
            everyOne: s.rejects_file ? 'every one is in the rejects file' : '--rejects FILE lists every one',
          }
        : null,
    delta: changes
      ? {
          description: 'against the values last uploaded to this list from here',
          sent: changes.added,
          unchanged: changes.unchanged,
          removed: changes.removed,
          sentLabel: 'values added',
          unchangedLabel: 'values unchanged',
        }
      : null,
    records,
    unit: 'values',
    files: s.rejects_file ? [{ label: 'rejects file', path: s.rejects_file }] : [],
    notes: [],
  };
}

// ---- a bulk dry run ----------------------------------------------------------------------------

export async function dryRunFacts(
  summary: DryRunBulkSummary,
  exitCode: number,
  out: string | null,
  run: RunContext,
): Promise<RunFacts> {
  const s = summary;
  const checked = `${s.rows.toLocaleString('en-US')} row${s.rows === 1 ? '' : 's'} checked: ${s.passed.toLocaleString('en-US')} passed, ${s.failed.toLocaleString('en-US')} failed, ${s.invalid.toLocaleString('en-US')} invalid${s.errors ? `, ${s.errors.toLocaleString('en-US')} could not be checked` : ''}`;
  const status = s.errors > 0 ? 'incomplete' : s.failed + s.invalid > 0 ? 'completed_with_failures' : 'completed';
  const sampled = run.recorder.sampled();
  const total = s.failed + s.invalid + s.errors;
  const reasons = sampled.reasons.slice(0, SHOWN_REASONS);
  const shownCount = reasons.reduce((n, r) => n + r.count, 0);
  return {
    ...common(run),
    status,
    statusWords: checked,
    exitCode,
    validateOnly: false,
    inputs: await inputFacts(run, s.rows),
    rowsRead: s.rows,
    accounting: {
      balanced: s.accounting?.balanced ?? s.rows === s.passed + s.failed + s.invalid + s.errors,
      levels: ['rows'],
      read: [s.rows],
      parts: [
        { label: 'passed', values: [s.passed] },
        { label: 'failed', values: [s.failed] },
        { label: 'invalid', values: [s.invalid] },
        { label: 'not checked (service)', values: [s.errors] },
      ],
      accountedFor: [s.passed + s.failed + s.invalid + s.errors],
    },
    rejects:
      total > 0
        ? {
            title: 'Failed or not checked, by reason',
            total,
            reasons: reasons.map((r) => ({ ...r, examples: r.examples.map(example) })),
            otherCount: Math.max(0, total - shownCount),
            otherReasons: Math.max(0, sampled.reasons.length - reasons.length),
            otherReasonsOrMore: sampled.other > 0,
            everyOne: out ? 'every row is in the results file' : 'every row is in the results',
          }
        : null,
    delta: null,
    records: [
      { kind: 'rows', outcome: 'read', count: s.rows },
      { kind: 'rows', outcome: 'passed', count: s.passed },
      { kind: 'rows', outcome: 'failed', count: s.failed },
      { kind: 'rows', outcome: 'invalid', count: s.invalid },
      { kind: 'rows', outcome: 'error', count: s.errors },
    ],
    unit: 'rows',
    files: out ? [{ label: 'results', path: out }] : [],
    notes: [],
  };
}

// ---- a run that ended in an error before its summary -------------------------------------------

export async function errorFacts(
  run: RunContext,
  exitCode: number,
  error: { message: string; hint?: string },
): Promise<RunFacts> {
  return {
    ...common(run),
    status: 'failed',
    statusWords: `failed: ${error.message}`,
    exitCode,
    error,
    validateOnly: false,
    inputs: await inputFacts(run, null),
    rowsRead: null,
    accounting: null,
    rejects: null,
    delta: null,
    records: [],
    unit: 'records',
    files: [],
    notes: [],
  };
}
