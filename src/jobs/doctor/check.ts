import { ExitCode } from '../../errors.js';
import type { CheckLine, CheckStatus } from '../../output/doctor.js';

export type { CheckStatus };

/** The checks, in the order they run and are shown: the local ones first, then the network. */
export const CHECK_NAMES = [
  'runtime',
  'config-folder',
  'state-folder',
  'temp-folder',
  'delta-record',
  'journals',
  'cron-path',
  'credentials',
  'base-url',
  'proxy',
  'dns',
  'tls',
  'clock',
  'token',
  'lists-path',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

/** What `leadctl doctor` found for one check. */
export interface CheckResult extends CheckLine {
  name: CheckName;
  /** What was measured, in words ("clock 3 s behind the service"); never a secret. */
  value: string;
  /** What to do about a warning or a failure. */
  hint: string | null;
  /** The documented exit code of this failure (2 environment, 3 authentication, 5 network or service). */
  exitCode: number;
}

export function ok(name: CheckName, value: string): CheckResult {
  return { name, status: 'ok', value, hint: null, exitCode: ExitCode.OK };
}

export function warn(name: CheckName, value: string, hint: string | null): CheckResult {
  return { name, status: 'warn', value, hint, exitCode: ExitCode.OK };
}

export function fail(name: CheckName, value: string, hint: string | null, exitCode: number): CheckResult {
  return { name, status: 'fail', value, hint, exitCode };
}

export function skip(name: CheckName, value: string): CheckResult {
  return { name, status: 'skip', value, hint: null, exitCode: ExitCode.OK };
}

/**
 * The run's exit code: 0 when nothing failed (warnings pass), else the largest of the failures'
 * codes, so that a network or service failure (5) outranks an authentication one (3), which
 * outranks a local setup problem (2).
 */
export function doctorExitCode(checks: readonly CheckResult[]): number {
  let code: number = ExitCode.OK;
  for (const c of checks) if (c.status === 'fail') code = Math.max(code, c.exitCode);
  return code;
}

/** `41.2 GB`, `512 MB`: free space for people. */
export function bytes(n: number): string {
  const units = ['bytes', 'KB', 'MB', 'GB', 'TB'];
  let value = n;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${n} bytes` : `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** `3 s`, `4 min 10 s`, `5 h 2 min` (to the nearest minute), `3 days`: a duration for people. */
export function duration(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  if (s < 86_400) {
    const minutes = Math.round(s / 60);
    return `${Math.floor(minutes / 60)} h${minutes % 60 ? ` ${minutes % 60} min` : ''}`;
  }
  const days = Math.floor(s / 86_400);
  return `${days} day${days === 1 ? '' : 's'}`;
}

/** The error code of a failed system call, or its message. */
export function errorCode(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown } | undefined;
  if (typeof e?.code === 'string') return e.code;
  return typeof e?.message === 'string' ? e.message : String(err);
}
