/**
 * What a run's report and metrics file are drawn from: the command's own summary put in one
 * shape (RunFacts), and what was heard during the run (RunRecord: requests, retries, records
 * settled over time). Plain data: src/jobs builds it, the renderers here only draw it.
 */

export interface RunFacts {
  /** `customers batch`, `lists create`… */
  command: string;
  profile: string | null;
  /** The service's base URL, without any user or password in it. */
  baseUrl: string | null;
  production: boolean;
  /** The command's status word (`completed_with_rejects`), and that status in a sentence. */
  status: string;
  statusWords: string;
  exitCode: number;
  error?: { message: string; hint?: string };
  validateOnly: boolean;
  inputs: InputFact[];
  /** Rows read from all inputs together (null: the command does not count rows). */
  rowsRead: number | null;
  accounting: AccountingFact | null;
  rejects: RejectsFact | null;
  delta: DeltaFact | null;
  /** Records by kind and outcome, for the metrics (`customers`/`accepted`, `values`/`uploaded`…). */
  records: RecordCount[];
  /** What a record is on the throughput chart: `customers`, `rows`, `values`. */
  unit: string;
  files: { label: string; path: string }[];
  notes: string[];
}

export interface InputFact {
  name: string;
  bytes: number | null;
  rows: number | null;
  sha256: string | null;
  /** How the hash was had: while the run read the file, or by reading it again after the run. */
  hashed: 'during the run' | 'after the run' | null;
}

/** `read = a + b + …` for each level, with what it adds up to. */
export interface AccountingFact {
  balanced: boolean;
  /** The levels in columns: customers, loans, payments; or rows. */
  levels: string[];
  /** The first row is what was read; the others are what it became, summed into `accountedFor`. */
  read: number[];
  parts: { label: string; values: number[] }[];
  accountedFor: number[];
}

export interface RejectsFact {
  title: string;
  total: number;
  reasons: ReasonFact[];
  /** Records of reasons not shown (beyond the cap), and how many such reasons (`otherReasonsOrMore`: at least that many). */
  otherCount: number;
  otherReasons: number;
  otherReasonsOrMore?: boolean;
  /** Where every one of them is: "every one is in the rejects file". */
  everyOne: string;
}

export interface ReasonFact {
  reason: string;
  count: number;
  /** A few records of this kind, as text already masked ("export.csv row 12 (customer 100104): …"). */
  examples: string[];
}

export interface DeltaFact {
  /** What the delta compared against, in words. */
  description: string;
  sent: number;
  unchanged: number;
  /** Words for `sent` (`sent`, `would be sent`, `added`…). */
  sentLabel: string;
  unchangedLabel: string;
  /** Lists: values removed from the list. */
  removed?: number;
}

export interface RecordCount {
  kind: string;
  outcome: string;
  count: number;
}

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'network_error'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** What was heard during the run, bounded whatever its length. */
export interface RunRecord {
  /** Epoch milliseconds. */
  startedAt: number;
  endedAt: number;
  /** The run cut into equal spans from its start; at most MAX_BUCKETS of them. */
  bucketMs: number;
  buckets: Bucket[];
  requests: Record<StatusClass, number>;
  retries: number;
  giveUps: number;
  bytesSent: number;
  /** The slowest single requests (attempts), slowest first. */
  slowest: SlowRequest[];
}

export interface Bucket {
  /** Records settled in this span (unit: RunFacts.unit). */
  records: number;
  /** Answers and network errors in this span. */
  requests: number;
  retries: number;
}

export interface SlowRequest {
  /** Milliseconds from the run's start to the answer. */
  at: number;
  method: string;
  path: string;
  /** HTTP status, or the network error's code. */
  status: number | string;
  durationMs: number;
  attempt: number;
  /** The push's request (chunk) this answer settled, when known. */
  chunk?: { number: number; customers: number; loans: number; payments: number };
}

/** The documented exit codes in words (README, docs/cron.md). */
export function exitCodeWords(code: number): string {
  switch (code) {
    case 0:
      return 'success';
    case 1:
      return 'a bug in leadctl';
    case 2:
      return 'usage, invalid input or environment problem';
    case 3:
      return 'authentication failed';
    case 4:
      return 'some records were rejected';
    case 5:
      return 'the service or the network failed after retries';
    case 7:
      return 'another run holds the lock';
    case 130:
      return 'interrupted (SIGINT)';
    case 143:
      return 'stopped (SIGTERM)';
    default:
      return 'unexpected exit code';
  }
}

/** A run that did its job: everything went through, or the run completed and said which records it refused. */
export function succeeded(exitCode: number): boolean {
  return exitCode === 0 || exitCode === 4;
}
