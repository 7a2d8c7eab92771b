import type { Command, OptionValues } from '@commander-js/extra-typings';
import type { CommandContext } from './context.js';
import type { RunFacts } from '../output/run-report.js';
import type { RunRecorder } from '../jobs/run-record.js';
import { ExitCode, LeadctlError, UsageError } from '../errors.js';

/**
 * `--report FILE.html` and `--metrics-file FILE.prom` (env LEADCTL_METRICS_FILE), shared by the
 * commands that read a file and send it (customers batch, loans/payments push, lists create and
 * update, dry-run --file). The command hands its summary over once it has it; the files are
 * written when the command ends, however it ends (an error too: monitoring must hear of it).
 */

export function addRunFileOptions<A extends unknown[], O extends OptionValues>(cmd: Command<A, O>, prefix = '') {
  return cmd
    .option(
      '--report <file.html>',
      `${prefix}write a report of the run to this file: one self-contained HTML page (status, inputs, accounting, rejects by reason with examples, throughput and retries)`,
    )
    .option(
      '--metrics-file <file.prom>',
      `${prefix}write the run's metrics in the Prometheus text format for node_exporter's textfile collector, atomically (env LEADCTL_METRICS_FILE)`,
    );
}

/** The two options as commander parses them, typed from their declaration above. */
export type RunFileFlags = ReturnType<ReturnType<typeof addRunFileOptions<[], Record<never, never>>>['opts']>;

/** Builds the run's facts once the command knows its exit code (and the error, if it threw). */
type FactsSource = (
  run: import('../jobs/run-facts.js').RunContext,
  exitCode: number,
  error?: RunFacts['error'],
) => Promise<RunFacts>;

export class RunFiles {
  private source: FactsSource | undefined;
  inputs: string[] = [];

  private constructor(
    private readonly ctx: CommandContext,
    readonly command: string,
    private readonly reportPath: string | undefined,
    private readonly metricsPath: string | undefined,
    readonly recorder: RunRecorder,
    private readonly unwatch: () => void,
  ) {}

  /** Undefined when neither file is asked for. Paths are checked now, before any work. */
  static async start(
    ctx: CommandContext,
    command: string,
    flags: RunFileFlags,
    inputs: string[],
  ): Promise<RunFiles | undefined> {
    const metrics = flags.metricsFile ?? (ctx.io.env.LEADCTL_METRICS_FILE || undefined);
    if (flags.report === undefined && metrics === undefined) return undefined;
    const [{ checkOutputPath }, { resolve }, { RunRecorder }] = await Promise.all([
      import('../ingest/table/writer.js'),
      import('node:path'),
      import('../jobs/run-record.js'),
    ]);
    const report = flags.report === undefined ? undefined : checkOutputPath(flags.report, ctx.io.cwd, '--report');
    const metricsPath = metrics === undefined ? undefined : checkOutputPath(metrics, ctx.io.cwd, '--metrics-file');
    if (report !== undefined && report === metricsPath)
      throw new UsageError('--report and --metrics-file name the same file; give each its own', {
        hint: 'e.g. --report run.html --metrics-file run.prom',
      });
    for (const input of inputs) {
      if (input === '-') continue;
      const full = resolve(ctx.io.cwd, input);
      if (full === report || full === metricsPath)
        throw new UsageError(
          `${full === report ? '--report' : '--metrics-file'} ${input} is an input of this run; name another file`,
          { hint: 'e.g. --report run.html --metrics-file run.prom, beside the input' },
        );
    }
    const recorder = new RunRecorder(() => ctx.io.now().getTime());
    const unwatch = ctx.watchApi((event) => recorder.api(event));
    const files = new RunFiles(ctx, command, report, metricsPath, recorder, unwatch);
    files.inputs = inputs;
    return files;
  }

  /** How to describe the run once it is over. */
  describe(source: FactsSource): void {
    this.source = source;
  }

  /** Writes nothing (the files belong to another run). */
  skip(): void {
    this.unwatch();
  }

  /**
   * Writes the files and returns the exit code: the run's, or 2 when the run succeeded but a
   * file could not be written (the operator relies on it).
   */
  async finish(exitCode: number, error?: RunFacts['error']): Promise<number> {
    this.unwatch();
    const [facts, { writeReport, writeMetrics }, { packageVersion }] = await Promise.all([
      this.facts(exitCode, error),
      import('../jobs/run-files.js'),
      import('../version.js'),
    ]);
    const record = this.recorder.finish();
    let code = exitCode;
    const attempt = async (what: string, path: string | undefined, write: (path: string) => Promise<void>) => {
      if (path === undefined) return;
      try {
        await write(path);
        this.ctx.log.info(`${what} written to ${path}`);
      } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        this.ctx.log.warn(`Error: could not write ${what.toLowerCase()} ${path}: ${message}`);
        if (code === 0) code = 2;
      }
    };
    await attempt('Report', this.reportPath, (p) => writeReport(p, facts, record, packageVersion()));
    await attempt('Metrics', this.metricsPath, (p) => writeMetrics(p, facts, record));
    return code;
  }

  private async facts(exitCode: number, error?: RunFacts['error']): Promise<RunFacts> {
    const run = await this.runContext();
    if (this.source) {
      try {
        return await this.source(run, exitCode, error);
      } catch {
        // fall through: a report of the error is better than none
      }
    }
    const { errorFacts } = await import('../jobs/run-facts.js');
    return errorFacts(run, exitCode, error ?? { message: 'the run ended without a summary' });
  }

  /** Where the run went and what it read, for the facts builders (src/jobs/run-facts.ts). */
  async runContext(): Promise<import('../jobs/run-facts.js').RunContext> {
    let target: { profile: string; baseUrl: string; production: boolean } | undefined;
    try {
      const [resolved, { isProductionUrl }] = await Promise.all([
        this.ctx.config.credentials(),
        import('../config/base-url.js'),
      ]);
      target = {
        profile: resolved.profile.value,
        baseUrl: resolved.baseUrl.value,
        production: isProductionUrl(resolved.baseUrl.value),
      };
    } catch {
      // no usable configuration: the report says so
    }
    return {
      command: this.command,
      target,
      inputs: this.inputs,
      cwd: this.ctx.io.cwd,
      recorder: this.recorder,
      hashInputs: this.reportPath !== undefined,
    };
  }
}

/**
 * Runs `body` with the run's files (when asked for) and writes them when it ends. An error the
 * body throws is written into them, then thrown on for main to print.
 */
export async function withRunFiles(
  ctx: CommandContext,
  command: string,
  flags: RunFileFlags,
  inputs: string[],
  body: (files: RunFiles | undefined) => Promise<number | void>,
): Promise<number> {
  const files = await RunFiles.start(ctx, command, flags, inputs);
  if (!files) return (await body(undefined)) ?? 0;
  let code: number;
  try {
    code = (await body(files)) ?? 0;
  } catch (err) {
    const exitCode = err instanceof LeadctlError ? err.exitCode : ExitCode.UNEXPECTED;
    // Another run of the same push holds the lock: the report and metrics files are that run's.
    // (A config folder's lock, also exit 7, is no other run of this command: its files are written.)
    if (err instanceof LeadctlError && err.code === 'locked') {
      files.skip();
      throw err;
    }
    const error =
      err instanceof LeadctlError
        ? { message: err.message, ...(err.hint ? { hint: err.hint } : {}) }
        : { message: err instanceof Error ? err.message : String(err) };
    await files.finish(exitCode, error);
    throw err;
  }
  return files.finish(code);
}
