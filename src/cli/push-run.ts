import { UsageError } from '../errors.js';
import { progressModeFor } from '../output/progress.js';
import type { CommandContext } from './context.js';
import type { PushFlags } from './push-options.js';
import type { BatchPushRequest, PushEnvironment, PushOutcome } from '../jobs/push/batch.js';
import type { UpsertKind } from '../ingest/lms/records.js';
import { PushReporter } from '../jobs/push/progress.js';
import { renderSummary, type PushSummary } from '../jobs/push/summary.js';
import { withRunFiles, type RunFileFlags, type RunFiles } from './run-files.js';

/**
 * The push commands' shared shell: wires the job to the context (credentials, client, progress,
 * signals), prints the summary as the run's one document, and says where the rejects went.
 */

function environment(ctx: CommandContext, files?: RunFiles): { env: PushEnvironment; finish(): void } {
  const mode = progressModeFor(ctx.io.stderr, ctx.io.env, ctx.globals.quiet);
  const progress = ctx.progress();
  const reporter = new PushReporter(progress, mode === 'spinner', () => ctx.io.now().getTime());
  const env: PushEnvironment = {
    io: ctx.io,
    async target() {
      const resolved = await ctx.config.credentials();
      return { profile: resolved.profile.value, baseUrl: resolved.baseUrl.value, clientId: resolved.clientId?.value };
    },
    api: () => ctx.api(),
    onEvent: (event) => {
      files?.recorder.push(event);
      reporter.handle(event);
    },
    warn: (line) => ctx.log.warn(line),
    stopGraceMs: ctx.io.env.LEADCTL_STOP_GRACE_MS ? Number(ctx.io.env.LEADCTL_STOP_GRACE_MS) : undefined,
  };
  return { env, finish: () => progress.stop() };
}

async function report(ctx: CommandContext, outcome: PushOutcome, files?: RunFiles): Promise<number> {
  const { summary } = outcome;
  files?.describe(async (run) => (await import('../jobs/run-facts.js')).pushFacts(summary, run));
  // What to do next, in the document too: a script reads the same advice as the log (the error's
  // own hint is the service's, e.g. "run the command again later", where a push resumes).
  const hint = nextStepHint(summary);
  await ctx.output.document(hint ? { ...summary, next_step: hint } : summary, () => renderSummary(summary));
  if (summary.rejects_file && summary.rejects > 0 && !ctx.output.isHuman)
    ctx.log.info(`${summary.rejects} rejected record line(s) written to ${summary.rejects_file}`);
  // The error and its hint together, last: what a log's reader looks for.
  if (summary.error) ctx.log.warn(`Error: ${summary.error.message}`);
  if (hint) ctx.log.warn(`Hint: ${hint}`);
  return outcome.exitCode;
}

const RESUME = 'rerun the same command with --resume to send only what was not acknowledged';

/** What the operator does next after a push that did not finish, in one line. */
export function nextStepHint(
  summary: Pick<PushSummary, 'status' | 'journal' | 'error'> & { requests?: PushSummary['requests'] },
): string | undefined {
  // A full or read-only disk: fix it first; a resume is worth it only when something was sent.
  if (summary.status === 'failed' && summary.error?.code === 'environment' && summary.error.hint) {
    const sent = (summary.requests?.sent ?? 0) + (summary.requests?.acknowledged_before ?? 0) > 0;
    return summary.journal && sent ? `${summary.error.hint}; then ${RESUME}` : summary.error.hint;
  }
  // An unexpected error's own advice (e.g. "rerun without --resume") beats the general one.
  if (summary.status === 'failed' && summary.error?.hint) return summary.error.hint;
  // A resume with the same refused credentials fails again: fixing them comes first.
  if (summary.status === 'authentication_failed' && summary.error?.hint)
    return summary.journal ? `${summary.error.hint}; then ${RESUME}` : summary.error.hint;
  if (
    summary.status === 'interrupted' ||
    summary.status === 'service_unavailable' ||
    summary.status === 'authentication_failed' ||
    summary.status === 'failed'
  ) {
    return summary.journal ? RESUME : undefined;
  }
  return undefined;
}

export async function runBatchPushCommand(
  ctx: CommandContext,
  request: BatchPushRequest,
  flags: RunFileFlags = {},
): Promise<number> {
  const { runBatchPush } = await import('../jobs/push/batch.js');
  if (request.inputs.length === 0)
    throw new UsageError('give the export: FILE..., or --loans FILE (with --payments FILE)', {
      hint: 'e.g. `leadctl customers batch export.csv --mapping mapping.json`; without --mapping the columns must be named as the API fields (`leadctl mapping init export.csv` writes a mapping)',
    });
  const inputs = request.inputs.map((i) => i.path);
  return withRunFiles(ctx, 'customers batch', flags, inputs, async (files) => {
    const { env, finish } = environment(ctx, files);
    try {
      return await report(ctx, await runBatchPush(request, env), files);
    } finally {
      finish();
    }
  });
}

export async function runSinglePushCommand(
  ctx: CommandContext,
  kind: UpsertKind,
  input: string,
  opts: PushFlags,
): Promise<number> {
  const { runSinglePush } = await import('../jobs/push/single.js');
  return withRunFiles(ctx, `${kind}s push`, opts, [input], async (files) => {
    const { env, finish } = environment(ctx, files);
    try {
      const outcome = await runSinglePush(
        {
          kind,
          input,
          mappingPath: opts.mapping,
          format: opts.format,
          rejectsPath: opts.rejects,
          concurrency: opts.concurrency,
          validateOnly: opts.validateOnly === true,
        },
        env,
      );
      return await report(ctx, outcome, files);
    } finally {
      finish();
    }
  });
}
