/**
 * The one error module. Every layer throws these; `main` renders them in one place
 * and turns them into the documented exit codes.
 */
export const ExitCode = {
  OK: 0,
  UNEXPECTED: 1,
  USAGE: 2,
  AUTH: 3,
  REJECTED: 4,
  SERVICE: 5,
  PENDING: 6,
  /** Another run holds the lock (an overlapping cron run of the same push). */
  LOCKED: 7,
  SIGINT: 130,
  SIGTERM: 143,
} as const;

export interface ErrorOptions {
  /** What the user can do next, e.g. "run `leadctl auth login`". */
  hint?: string;
  /** Structured details included in the JSON form (field errors, row numbers...). */
  details?: unknown;
  /** The request and answer behind an error of the API client, for code that decides on it. */
  http?: HttpContext;
  cause?: unknown;
}

/** What the API client knew of a failed request: typed, where `details` is only for the JSON form. */
export interface HttpContext {
  method?: string;
  path?: string;
  /** The HTTP status, when the service answered. */
  status?: number;
  /** Attempts made, retries included. */
  attempts?: number;
  /** The answer's body (redacted), when there was one. */
  body?: unknown;
}

export class LeadctlError extends Error {
  readonly exitCode: number;
  readonly code: string;
  readonly hint?: string;
  readonly details?: unknown;
  readonly http?: HttpContext;

  constructor(code: string, exitCode: number, message: string, options: ErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.exitCode = exitCode;
    this.hint = options.hint;
    this.details = options.details;
    this.http = options.http;
  }

  toJSON(): Record<string, unknown> {
    return {
      code: this.code,
      message: this.message,
      exit_code: this.exitCode,
      ...(this.hint ? { hint: this.hint } : {}),
      ...(this.details !== undefined ? { details: this.details } : {}),
    };
  }
}

/** Bad flags or arguments (exit 2). */
export class UsageError extends LeadctlError {
  constructor(message: string, options?: ErrorOptions) {
    super('usage', ExitCode.USAGE, message, options);
  }
}

export interface InputLocation {
  file?: string;
  row?: number;
  /** 1-based column of a delimited file. */
  column?: number;
  field?: string;
}

/** An input file that cannot be read or is invalid (exit 2). Names file, row and field. */
export class InputError extends LeadctlError {
  readonly location: InputLocation;
  constructor(message: string, location: InputLocation = {}, options?: ErrorOptions) {
    super('invalid_input', ExitCode.USAGE, formatLocation(location) + message, {
      ...options,
      details: options?.details ?? (Object.keys(location).length ? location : undefined),
    });
    this.location = location;
  }
}

export function formatLocation(loc: InputLocation): string {
  const parts: string[] = [];
  if (loc.file) parts.push(loc.file);
  if (loc.row !== undefined) parts.push(`row ${loc.row}`);
  if (loc.column !== undefined) parts.push(`column ${loc.column}`);
  if (loc.field) parts.push(`field ${loc.field}`);
  return parts.length ? parts.join(', ') + ': ' : '';
}

/** Missing, wrong or revoked credentials (exit 3). */
export class AuthError extends LeadctlError {
  constructor(message: string, options?: ErrorOptions) {
    super('authentication', ExitCode.AUTH, message, {
      hint: 'run `leadctl auth login`, or set LEADCTL_CLIENT_ID and LEADCTL_CLIENT_SECRET',
      ...options,
    });
  }
}

/** The service refused the request's content (HTTP 422 and the like; exit 2). */
export class ValidationError extends LeadctlError {
  readonly fieldErrors: Record<string, string[]>;
  constructor(
    message: string,
    fieldErrors: Record<string, string[]> = {},
    options?: ErrorOptions,
    code: 'validation' | 'conflict' = 'validation',
  ) {
    super(code, ExitCode.USAGE, message, { details: { errors: fieldErrors }, ...options });
    this.fieldErrors = fieldErrors;
  }
}

/** The service refused a request body as too large (HTTP 413; exit 2). Batch senders split and resend. */
export class PayloadTooLargeError extends ValidationError {}

/**
 * The service refused a record as conflicting with what it holds (HTTP 409). A push rejects that
 * record with the reason and goes on (exit 4); a one-request command stops (exit 2).
 */
export class ConflictError extends ValidationError {
  constructor(message: string, fieldErrors: Record<string, string[]> = {}, options?: ErrorOptions) {
    super(message, fieldErrors, options, 'conflict');
  }
}

/**
 * The service answered with a status that says the request itself is wrong for this deployment
 * (HTTP 405, 414, an unexpected 4xx, an unfollowed redirect): a leadctl or deployment problem,
 * never retried and never reported as an outage (exit 2).
 */
export class RequestProblemError extends LeadctlError {
  readonly status: number;
  constructor(message: string, status: number, options?: ErrorOptions) {
    super('request_refused', ExitCode.USAGE, message, options);
    this.status = status;
  }
}

/** The requested object does not exist (HTTP 404 or 410; exit 2: the input named something unknown). */
export class NotFoundError extends LeadctlError {
  constructor(message: string, options?: ErrorOptions) {
    super('not_found', ExitCode.USAGE, message, options);
  }
}

/** Still rate limited after the retries (exit 5). */
export class RateLimitedError extends LeadctlError {
  constructor(message: string, options?: ErrorOptions) {
    super('rate_limited', ExitCode.SERVICE, message, options);
  }
}

/** The service answered with an error status after the retries (exit 5). */
export class ServiceError extends LeadctlError {
  readonly status?: number;
  constructor(message: string, status?: number, options?: ErrorOptions) {
    super('service', ExitCode.SERVICE, message, options);
    this.status = status;
  }
}

/** The service could not be reached after the retries (exit 5). */
export class NetworkError extends LeadctlError {
  constructor(message: string, options?: ErrorOptions) {
    super('network', ExitCode.SERVICE, message, options);
  }
}

/** Another process holds the lock this run needs (exit 7). */
export class LockedError extends LeadctlError {
  constructor(message: string, options?: ErrorOptions) {
    super('locked', ExitCode.LOCKED, message, options);
  }
}

/**
 * The machine refused: a full, read-only or forbidden place, a device error (exit 2, like bad input:
 * the operator fixes it, it is not a bug). The message names the path; `errno` is the system's code.
 */
export class EnvironmentError extends LeadctlError {
  readonly path?: string;
  readonly errno?: string;
  constructor(message: string, options: ErrorOptions & { path?: string; errno?: string } = {}) {
    const { path, errno, ...rest } = options;
    super('environment', ExitCode.USAGE, message, {
      ...rest,
      details: rest.details ?? { ...(path ? { path } : {}), ...(errno ? { errno } : {}) },
    });
    this.path = path;
    this.errno = errno;
  }
}

const SPACE_HINT = 'free space on that file system (or raise the quota), or point leadctl at a folder with room';
const ACCESS_HINT = 'let the user running leadctl write there, or point leadctl at a folder it can write';

/** System error codes that say something about the machine, never about leadctl: what they mean and what to do. */
const ENVIRONMENT_CODES: Record<string, { says: string; hint: string }> = {
  ENOSPC: { says: 'no space left on the device', hint: SPACE_HINT },
  EDQUOT: { says: 'the disk quota is used up', hint: SPACE_HINT },
  EFBIG: {
    says: 'the file is larger than a file may be here',
    hint: 'raise the file size limit (`ulimit -f`, or the limit of the job that runs leadctl), or write to another file system',
  },
  EACCES: { says: 'permission denied', hint: ACCESS_HINT },
  EPERM: { says: 'operation not permitted', hint: ACCESS_HINT },
  EROFS: { says: 'the file system is read-only', hint: 'point leadctl at a folder on a writable file system' },
  EIO: { says: 'an input/output error of the device', hint: 'check the disk or the network file system' },
  EMFILE: { says: 'too many open files', hint: 'raise the limit of open files (ulimit -n)' },
  ENFILE: { says: 'too many open files on the system', hint: 'raise the limit of open files' },
  SQLITE_FULL: { says: 'no space left on the device (the database is full)', hint: SPACE_HINT },
  SQLITE_READONLY: { says: 'the database cannot be written (read-only)', hint: ACCESS_HINT },
  SQLITE_CANTOPEN: { says: 'the database cannot be opened', hint: ACCESS_HINT },
  SQLITE_IOERR: { says: 'an input/output error of the device', hint: 'check the disk or the network file system' },
  SQLITE_PERM: { says: 'permission denied', hint: ACCESS_HINT },
};

/**
 * A folder leadctl was writing in that is gone: someone else's doing (a clean-up of the temporary
 * folder, another job), but only where the caller names the place it writes; anywhere else a
 * missing file may be a path leadctl got wrong, which stays a bug.
 */
const VANISHED_CODES: Record<string, { says: string; hint: string }> = {
  ENOENT: {
    says: 'it is gone (the folder was removed or moved while leadctl was writing there)',
    hint: 'make sure nothing else (a clean-up of the temporary folder, another job) removes that folder while leadctl runs, then run again',
  },
  ENOTDIR: {
    says: 'its folder is no longer a folder (replaced while leadctl was writing there)',
    hint: 'make sure nothing else replaces that folder while leadctl runs, then run again',
  },
};

/**
 * The one place where an error of the system (a Node `fs` error with `.code` and `.path`, or a
 * SQLite error: no space, no permission, read-only, quota, I/O) becomes an EnvironmentError naming
 * the path; anything else is undefined (a bug stays a bug). `path` and `what` ("the rejects file")
 * name the place when the error itself cannot (a write to a descriptor carries no path).
 */
export function environmentError(
  err: unknown,
  path?: string,
  what?: string,
  hint?: string,
): EnvironmentError | undefined {
  if (err instanceof EnvironmentError) return err;
  if (!(err instanceof Error) || err instanceof LeadctlError) return undefined;
  const code = (err as NodeJS.ErrnoException).code;
  if (typeof code !== 'string') return undefined;
  // SQLITE_IOERR_WRITE is an SQLITE_IOERR, SQLITE_READONLY_DBMOVED an SQLITE_READONLY.
  const vanished = path === undefined ? undefined : VANISHED_CODES[code];
  const known = vanished ?? ENVIRONMENT_CODES[code] ?? ENVIRONMENT_CODES[code.split('_').slice(0, 2).join('_')];
  if (!known) return undefined;
  const where = path ?? (err as NodeJS.ErrnoException).path;
  const place = [what, where].filter(Boolean).join(' ');
  return new EnvironmentError(`${place ? `${place}: ` : ''}${known.says} (${code})`, {
    // The caller's hint is about its place in general (room, rights): a vanished folder has its own.
    hint: vanished ? known.hint : (hint ?? known.hint),
    path: where,
    errno: code,
    cause: err,
  });
}

/** The run was stopped by a signal (exit 130 / 143). */
export class InterruptedError extends LeadctlError {
  constructor(signal: 'SIGINT' | 'SIGTERM', options?: ErrorOptions) {
    super('interrupted', signal === 'SIGINT' ? ExitCode.SIGINT : ExitCode.SIGTERM, `interrupted by ${signal}`, options);
  }
}

/** Longer values are cut in messages: a 20 MB cell must not become 20 MB of stderr. */
const QUOTE_MAX = 60;

/**
 * A value as messages, tables and rejects files quote it: `"AAAA…" (20,000,000 chars)` when long
 * (the first `max` characters, never half a surrogate pair). `quotes: false` leaves out the quotes.
 */
export function quoteValue(value: string, options: { max?: number; quotes?: boolean } = {}): string {
  const max = options.max ?? QUOTE_MAX;
  const q = options.quotes === false ? '' : '"';
  if (value.length <= max) return `${q}${value}${q}`;
  const end = isHighSurrogate(value.charCodeAt(max - 1)) ? max - 1 : max;
  return `${q}${value.slice(0, end)}…${q} (${value.length.toLocaleString('en-US')} chars)`;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
