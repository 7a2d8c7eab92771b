import { basename, isAbsolute, relative } from 'node:path';
import { styleText } from 'node:util';

/** How `leadctl demo` presents itself: headings, the command as typed, outcomes and the summary. */

export type DemoStepStatus = 'ok' | 'unexpected' | 'missing' | 'skipped';

export interface DemoStepResult {
  id: string;
  title: string;
  /** The command as a user would type it (secrets replaced by a description). */
  command: string;
  status: DemoStepStatus;
  exit_code: number | null;
  /** What the exit code means for this step (when it was an expected one). */
  meaning?: string;
  /** Why the step did not run. */
  reason?: string;
}

export interface DemoFile {
  path: string;
  /** Data rows (header excluded). */
  rows: number;
}

export interface DemoReport {
  ok: boolean;
  base_url: string;
  files_dir: string;
  elapsed_seconds: number;
  steps: DemoStepResult[];
  /** Steps that could not run because this build lacks their command or fixture: "command: why". */
  missing: string[];
  /** Row counts of the sandbox's store at the end. */
  store: Record<string, number>;
  /** The files the steps wrote (in files_dir), with their row counts. */
  files: DemoFile[];
  /** Whether files_dir is kept after the demo (--keep); otherwise it is removed with the rest. */
  files_kept: boolean;
}

export class DemoText {
  constructor(
    private readonly color: boolean,
    private readonly cwd: string,
  ) {}

  private style(format: Parameters<typeof styleText>[0], text: string): string {
    return this.color ? styleText(format, text) : text;
  }

  heading(index: number, total: number, title: string): string {
    const label = `── ${index}/${total}  ${title} `;
    return '\n' + this.style('bold', label.padEnd(Math.max(72, label.length + 4), '─')) + '\n';
  }

  explain(text: string): string {
    return this.style('dim', text) + '\n';
  }

  /** A path as short as it can be shown: relative to where the user is, when it is below it. */
  path(path: string): string {
    if (!isAbsolute(path)) return path;
    const rel = relative(this.cwd, path);
    return rel && !rel.startsWith('..') && !isAbsolute(rel) ? rel : path;
  }

  /** The command as a user would type it; `env` and `stdin` are descriptions, never the values. */
  command(argv: string[], env: Record<string, string> = {}, stdin?: string): string {
    const words = argv.map((word) => shellWord(isAbsolute(word) ? this.path(word) : word));
    const prefix = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    return [...prefix, 'leadctl', ...words].join(' ') + (stdin ? ` < ${stdin}` : '');
  }

  commandLine(command: string): string {
    return this.style('cyan', `$ ${command}`) + '\n';
  }

  outcome(result: DemoStepResult): string {
    switch (result.status) {
      case 'ok':
        return this.style('green', `✓ exit ${result.exit_code}: ${result.meaning}`) + '\n';
      case 'unexpected':
        return (
          this.style(
            'red',
            `✗ exit ${result.exit_code}: not what this step expects${result.reason ? ` (${result.reason})` : ''}`,
          ) + '\n'
        );
      case 'missing':
        return this.style('yellow', `… not shown: ${result.reason}`) + '\n';
      case 'skipped':
        return this.style('yellow', `… skipped: ${result.reason}`) + '\n';
    }
  }

  summary(report: DemoReport): string {
    const mark: Record<DemoStepStatus, string> = {
      ok: 'ok',
      unexpected: 'FAILED',
      missing: 'missing',
      skipped: 'skipped',
    };
    const width = Math.max(...report.steps.map((s) => s.title.length));
    const lines = [
      '',
      this.style('bold', `Demo ${report.ok ? 'finished' : 'FAILED'} in ${report.elapsed_seconds.toFixed(1)} s`),
      '',
    ];
    for (const step of report.steps) {
      const code = step.exit_code === null ? '' : `exit ${step.exit_code}`;
      const detail = step.status === 'ok' ? step.meaning : step.reason;
      lines.push(
        `  ${step.title.padEnd(width)}  ${mark[step.status].padEnd(7)}  ${code.padEnd(7)}  ${detail ?? ''}`.trimEnd(),
      );
    }
    const s = report.store;
    lines.push(
      '',
      `Sandbox store: ${s.lists ?? 0} list(s) with ${s.list_items ?? 0} item(s); ${s.customers ?? 0} customer(s), ${s.loans ?? 0} loan(s), ${s.payments ?? 0} payment(s); ${s.leads ?? 0} lead(s), ${s.offers ?? 0} offer(s).`,
    );
    if (report.missing.length)
      lines.push('Not shown (not in this build of leadctl yet):', ...report.missing.map((m) => `  leadctl ${m}`));
    const rows = (file: DemoFile) => `(${file.rows} row${file.rows === 1 ? '' : 's'})`;
    if (report.files.length && report.files_kept) {
      lines.push('', `Files kept in ${report.files_dir}:`);
      for (const file of report.files) lines.push(`  ${file.path}  ${rows(file)}`);
    } else if (report.files.length) {
      lines.push('', 'Files written, removed with the rest of the demo (`leadctl demo --keep` keeps them):');
      for (const file of report.files) lines.push(`  ${basename(file.path)}  ${rows(file)}`);
    }
    return lines.join('\n') + '\n';
  }
}

const SAFE_WORD = /^[A-Za-z0-9_@%+=:,./-]+$/;

/** A word as a POSIX shell needs it. */
export function shellWord(word: string): string {
  return SAFE_WORD.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
