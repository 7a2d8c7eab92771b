import { styleText } from 'node:util';
import type { Column } from './render.js';

/** `leadctl doctor` for people: one line a check, a mark that reads without colour, the hint below. */

export type CheckStatus = 'ok' | 'warn' | 'fail' | 'skip';

/** One check's result as it is shown (src/jobs/doctor/check.ts makes them). */
export interface CheckLine {
  name: string;
  status: CheckStatus;
  value: string;
  hint: string | null;
}

export const CHECK_LABELS: Record<string, string> = {
  runtime: 'runtime',
  'config-folder': 'config folder',
  'state-folder': 'state folder',
  'temp-folder': 'temp folder',
  'delta-record': 'delta record',
  journals: 'journals',
  'cron-path': 'cron PATH',
  credentials: 'credentials',
  'base-url': 'base URL',
  proxy: 'proxy',
  dns: 'DNS',
  tls: 'TLS',
  clock: 'clock',
  token: 'token',
  'lists-path': 'lists path',
};

const LABEL_WIDTH = Math.max(...Object.values(CHECK_LABELS).map((l) => l.length));

const MARKS: Record<CheckStatus, { unicode: string; ascii: string; color: Parameters<typeof styleText>[0] }> = {
  ok: { unicode: '✓', ascii: 'OK  ', color: 'green' },
  warn: { unicode: '!', ascii: 'WARN', color: 'yellow' },
  fail: { unicode: '✗', ascii: 'FAIL', color: 'red' },
  skip: { unicode: '–', ascii: 'SKIP', color: 'dim' },
};

/** The machine formats (-o json|ndjson|csv): one record a check. */
export const CHECK_COLUMNS: Column<CheckLine>[] = [
  { key: 'name' },
  { key: 'status' },
  { key: 'value' },
  { key: 'hint' },
];

/**
 * A terminal or a mail reader that is not UTF-8 (LC_ALL, LC_CTYPE or LANG naming another
 * charset, or C/POSIX) gets OK/WARN/FAIL/SKIP instead of ✓ ! ✗ –. Unset: UTF-8, as most are.
 */
export function wantsUnicode(env: Record<string, string | undefined>): boolean {
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG;
  if (!locale) return true;
  return /utf-?8/i.test(locale);
}

export class DoctorText {
  constructor(
    private readonly color: boolean,
    private readonly unicode: boolean,
  ) {}

  private style(format: Parameters<typeof styleText>[0], text: string): string {
    // Whether to colour is decided by the caller (--no-color, NO_COLOR, a terminal on stdout).
    return this.color ? styleText(format, text, { validateStream: false }) : text;
  }

  heading(version: string, profile: string, baseUrl: string | null, production: boolean): string {
    const where = baseUrl ? `${baseUrl}${production ? ' [production]' : ''}` : 'no usable base URL';
    return this.style('bold', `leadctl ${version} doctor: profile "${profile}", ${where}`) + '\n';
  }

  line(check: CheckLine): string {
    const mark = MARKS[check.status];
    const symbol = this.style(mark.color, this.unicode ? mark.unicode : mark.ascii);
    const label = (CHECK_LABELS[check.name] ?? check.name).padEnd(LABEL_WIDTH);
    const out = [`${symbol} ${label}  ${check.value}`];
    if (check.hint) out.push(`${' '.repeat((this.unicode ? 1 : 4) + 1 + LABEL_WIDTH + 2)}hint: ${check.hint}`);
    return out.join('\n') + '\n';
  }

  summary(checks: readonly CheckLine[], exitCode: number): string {
    const count = (s: CheckStatus) => checks.filter((c) => c.status === s).length;
    const [passed, warnings, failed, skipped] = [count('ok'), count('warn'), count('fail'), count('skip')];
    const parts = [
      `${passed} ok`,
      `${warnings} warning${warnings === 1 ? '' : 's'}`,
      `${failed} failed`,
      `${skipped} skipped`,
    ];
    const verdict = failed === 0 ? 'all checks pass' : `exit ${exitCode}`;
    return (
      '\n' + this.style(failed ? 'red' : 'bold', `${checks.length} checks: ${parts.join(', ')}; ${verdict}`) + '\n'
    );
  }
}
