import { createHash } from 'node:crypto';
import { UPSERT_ANSWER, type ApiClient } from '../../api/client.js';
import { noRecords } from '../../ingest/table/reader.js';
import {
  AuthError,
  ConflictError,
  ExitCode,
  InterruptedError,
  LeadctlError,
  NotFoundError,
  ValidationError,
} from '../../errors.js';
import { stageUpserts, type UpsertKind, type UpsertRecord } from '../../ingest/lms/records.js';
import { formatFromName, peekText, sniffFormat, type InputFormat, type RowProblem } from '../../ingest/lms/rows.js';
import { IDENTITY_MAPPING, loadMapping, withDelimiter } from '../../ingest/mapping/mapping.js';
import { openInput } from '../../ingest/sources.js';
import { Staging } from '../../ingest/lms/staging.js';
import { formatZodIssues } from '../../schema/common.js';
import { CustomerUpsertSchema, LoanUpsertSchema, PaymentUpsertSchema } from '../../schema/loan-performance.js';
import type { PushEnvironment, PushOutcome } from './environment.js';
import { DEFAULT_STOP_GRACE_MS } from './stopping.js';
import { defaultRejectsName, RejectsWriter } from './rejects.js';
import { Tally } from './accounting.js';
import { accountFor, outcomeOf, type StopReason } from './summary.js';
import type { Reject } from './validate.js';

/**
 * `customers push`, `loans push`, `payments push`: one upsert request per record, a few in flight,
 * with the batch's mappings, checks, rejects file, summary and exit codes. A record the service
 * refuses (422, or 404 for a customer or loan it does not know) is rejected; an authentication
 * failure or a service that stays down stops the run, and what was not sent is reported as such.
 */

export interface SinglePushRequest {
  kind: UpsertKind;
  input: string;
  mappingPath?: string;
  format?: InputFormat;
  rejectsPath?: string;
  concurrency: number;
  validateOnly: boolean;
}

const COMMAND: Record<UpsertKind, string> = {
  customer: 'customers push',
  loan: 'loans push',
  payment: 'payments push',
};
const PLURAL = { customer: 'customers', loan: 'loans', payment: 'payments' } as const;
const SCHEMA = { customer: CustomerUpsertSchema, loan: LoanUpsertSchema, payment: PaymentUpsertSchema } as const;

function pathFor(kind: UpsertKind, customerId: string): string {
  if (kind === 'customer') return '/api/v1/loan-performance/customers';
  return `/api/v1/loan-performance/customers/${encodeURIComponent(customerId)}/${kind === 'loan' ? 'loans' : 'payments'}`;
}

/** The body's field path as the person reads it (`lead_loan.applied_at`). */
function fieldOf(kind: UpsertKind, field: string): string {
  return kind === 'customer' && field !== 'customer_id' && !field.startsWith('lead_loan')
    ? `lead_loan.${field}`
    : field;
}

export async function runSinglePush(request: SinglePushRequest, env: PushEnvironment): Promise<PushOutcome> {
  const { io, kind } = { io: env.io, kind: request.kind };
  const started = io.now();
  const startedMs = performance.now();
  const mapping = withDelimiter(
    request.mappingPath ? await loadMapping(request.mappingPath, io.cwd) : IDENTITY_MAPPING,
    io.input?.delimiter,
  );
  const tally = new Tally();
  const level = PLURAL[kind];
  let client: ApiClient | undefined;
  let stop: StopReason | undefined;
  const staging = new Staging(io.env.LEADCTL_TMPDIR || undefined);
  const rejects = new RejectsWriter(
    request.rejectsPath ?? defaultRejectsName(started),
    io.cwd,
    staging.sources,
    request.rejectsPath !== undefined,
    {
      raw: io.csv?.raw,
      // A rejects file that cannot be written (a full disk) stops the run; what was sent is counted.
      onFailure: (error) => {
        if (stop?.kind !== 'failed') stop = { kind: 'failed', error };
      },
    },
  );
  const abort = new AbortController();
  // The file is read whole before anything is sent: a signal then stops the reading at once
  // (even one waiting on a pipe or a FIFO), and the run ends as interrupted, with nothing sent.
  const reading = new AbortController();
  let release: (() => void) | undefined;
  const inFlight = new Set<Promise<void>>();
  let sentRequests = 0;
  try {
    // Taken before reading, so that a signal at any point still ends with the summary (all not sent).
    release = io.onSignal((signal) => {
      if (stop?.kind === 'signal') abort.abort(new Error(`stopped by a second ${signal}`));
      stop ??= { kind: 'signal', signal };
      reading.abort(new InterruptedError(signal));
      env.onEvent({ type: 'stopping', reason: signal, inFlight: inFlight.size });
      setTimeout(
        () => abort.abort(new Error('the wait for requests in flight ran out')),
        env.stopGraceMs ?? DEFAULT_STOP_GRACE_MS,
      ).unref();
    });
    if (!request.validateOnly) {
      client = await env.api();
      await client.checkCredentials();
    }
    let input = await openInput(request.input, io, { signal: reading.signal });
    // `-` is one JSON record (or several); a named file says its format, or shows it.
    let format: InputFormat | undefined =
      request.format ?? (request.input === '-' ? undefined : formatFromName(input.name));
    if (format === undefined) {
      const peeked = await peekText(input);
      input = peeked.input;
      format = sniffFormat(peeked.head);
    }
    const problem = (p: RowProblem) => {
      tally.read[level]++;
      tally.rejected[level]++;
      rejects.add({ ...p, customerId: p.customerId ?? '' });
    };
    const rowsRead = await stageUpserts(input, kind, format, {
      staging,
      mapping,
      problems: problem,
      hash: createHash('sha256'),
    });
    if (rowsRead === 0) throw noRecords([input.name]);
    env.onEvent({ type: 'staged', rows: rowsRead, seconds: (performance.now() - startedMs) / 1000 });

    let retries = 0;
    let notSent = 0;
    let done = 0;
    let total = 0;
    const reject = (r: Reject) => rejects.add(r);

    const sendOne = async (record: UpsertRecord, src: number, row: number): Promise<void> => {
      const base = {
        level: kind,
        src,
        row,
        customerId: record.customerId,
        loanId: record.loanId,
        paymentId: record.paymentId,
      } as const;
      try {
        const subject = kind === 'customer' ? undefined : `customer ${record.customerId}`;
        const res = await client!.send({
          method: 'POST',
          path: pathFor(kind, record.customerId),
          body: record.body,
          auth: 'bearer',
          repeat: 'safe',
          subject,
          answer: UPSERT_ANSWER,
          signal: abort.signal,
        });
        retries += res.attempts - 1;
        sentRequests++;
        tally.sent[level]++;
        tally.accepted[level]++;
        if (kind === 'customer') {
          tally.sent.loans++;
          tally.accepted.loans++;
        }
      } catch (err) {
        // A 404 names the customer of a loan or payment; for a customer itself it means the route is missing.
        if (err instanceof ValidationError || (err instanceof NotFoundError && kind !== 'customer')) {
          sentRequests++;
          tally.sent[level]++;
          tally.rejected[level]++;
          if (kind === 'customer') {
            tally.sent.loans++;
            tally.rejected.loans++;
          }
          if (err instanceof NotFoundError) {
            const what =
              kind === 'loan'
                ? `customer ${record.customerId}`
                : `customer ${record.customerId} or its loan ${record.loanId}`;
            const status = err.http?.status ?? 404;
            reject({ ...base, reason: `the service does not know ${what} (HTTP ${status}): push it first` });
          } else {
            const prefix =
              err instanceof ConflictError
                ? 'refused by the service as a conflict (HTTP 409)'
                : 'refused by the service';
            const entries = Object.entries(err.fieldErrors);
            if (entries.length === 0) reject({ ...base, reason: `refused by the service: ${err.message}` });
            for (const [field, reasons] of entries)
              for (const reason of reasons) reject({ ...base, field, reason: `${prefix}: ${reason}` });
          }
          return;
        }
        notSent++;
        tally.notSent[level]++;
        if (kind === 'customer') tally.notSent.loans++;
        if (abort.signal.aborted) return;
        if (err instanceof AuthError) stop ??= { kind: 'auth', error: err };
        else if (err instanceof LeadctlError && err.exitCode === ExitCode.SERVICE)
          stop ??= { kind: 'service', error: err };
        // A request the deployment refuses (405, 414…) fails the same way for every record: stop, and say so.
        else if (err instanceof LeadctlError) stop ??= { kind: 'failed', error: err };
        else throw err;
      } finally {
        done++;
        env.onEvent({ type: 'record', done, total, rejected: tally.rejected[level] });
      }
    };

    let failure: unknown;
    const docs = staging.documents()[Symbol.iterator]();
    for (let next = docs.next(); !next.done; next = docs.next()) {
      const doc = next.value;
      const record = JSON.parse(doc.data!) as UpsertRecord;
      tally.read[level] += 1 + doc.superseded.length;
      if (kind === 'customer') tally.read.loans += 1 + doc.superseded.length;
      for (const old of doc.superseded) {
        tally.duplicates[level]++;
        if (kind === 'customer') tally.duplicates.loans++;
        const idField = kind === 'customer' ? 'customer_id' : kind === 'loan' ? 'loan_id' : 'payment_id';
        reject({
          level: kind,
          src: old.src,
          row: old.row,
          customerId: record.customerId,
          loanId: record.loanId,
          paymentId: record.paymentId,
          field: idField,
          reason: `duplicate ${idField}`,
          supersededBy: { src: doc.src, row: doc.row },
        });
      }
      const base = {
        level: kind,
        src: doc.src,
        row: doc.row,
        customerId: record.customerId,
        loanId: record.loanId,
        paymentId: record.paymentId,
      } as const;
      const check = SCHEMA[kind].safeParse(record.body);
      const converted = new Set(record.errors.map((e) => fieldOf(kind, e.field)));
      const problems = [
        ...record.errors.map((e) => ({
          field: fieldOf(kind, e.field),
          reason: e.reason + (e.column && e.column !== e.field ? ` (column "${e.column}")` : ''),
        })),
        ...(check.success
          ? []
          : formatZodIssues(check.error)
              .filter((i) => !converted.has(i.path))
              .map((i) => ({ field: i.path, reason: i.message }))),
      ];
      if (problems.length) {
        tally.rejected[level]++;
        if (kind === 'customer') tally.rejected.loans++;
        for (const p of problems) reject({ ...base, field: p.field || undefined, reason: p.reason });
        continue;
      }
      tally.valid[level]++;
      if (kind === 'customer') tally.valid.loans++;
      total++;
      if (request.validateOnly) continue;
      while (inFlight.size >= request.concurrency && stop === undefined) await Promise.race(inFlight);
      if (stop !== undefined) {
        notSent++;
        tally.notSent[level]++;
        if (kind === 'customer') tally.notSent.loans++;
        continue;
      }
      const task: Promise<void> = sendOne(record, doc.src, doc.row)
        .catch((err) => {
          failure ??= err;
          stop ??= {
            kind: 'service',
            error: err instanceof LeadctlError ? err : new LeadctlError('unexpected', ExitCode.UNEXPECTED, String(err)),
          };
        })
        .finally(() => inFlight.delete(task));
      inFlight.add(task);
    }
    while (inFlight.size > 0) await Promise.race(inFlight);
    if (failure !== undefined) throw failure;

    rejects.close();
    const { status, exitCode, error } = outcomeOf(
      stop as StopReason | undefined,
      request.validateOnly,
      rejects.count > 0,
    );
    const elapsed = (performance.now() - startedMs) / 1000;
    const summary = accountFor({
      command: COMMAND[kind],
      status,
      validate_only: request.validateOnly,
      resumed: false,
      rows_read: rowsRead,
      customers: tally.level('customers'),
      loans: tally.level('loans'),
      payments: tally.level('payments'),
      duplicates: tally.duplicates[level],
      requests: {
        total: request.validateOnly ? total : sentRequests + notSent,
        sent: sentRequests,
        acknowledged_before: 0,
        not_sent: notSent,
      },
      retries,
      elapsed_seconds: Math.round(elapsed * 10) / 10,
      rows_per_second: elapsed > 0 ? Math.round(rowsRead / elapsed) : 0,
      rejects_file: rejects.created ? rejects.path : null,
      rejects: rejects.count,
      reasons: rejects.reasons(),
      journal: null,
      exit_code: exitCode,
      ...(error ? { error } : {}),
      ...(rejects.failure
        ? {
            notes: [
              `the rejects file ${rejects.path} could not be written and was removed: its ${rejects.count} line(s) are counted here`,
            ],
          }
        : {}),
    });
    return { summary, exitCode: summary.exit_code };
  } catch (err) {
    // Ended by an error before anything was sent: an earlier run's rejects file stays as it was.
    if (sentRequests === 0) rejects.closeKeepingEarlier();
    throw err;
  } finally {
    abort.abort(new Error('the push ended'));
    release?.();
    rejects.close();
    staging.close();
  }
}
