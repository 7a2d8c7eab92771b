import { type Command, Option } from '@commander-js/extra-typings';
import { defineCommand } from './command.js';
import type { CommandContext } from './context.js';
import { addRunFileOptions, type RunFiles } from './run-files.js';
import { ExitCode, formatLocation, UsageError } from '../errors.js';
import { abortOnSignal } from '../io/io.js';
import { maskLongNumbers } from '../io/mask.js';

/** Unchecked rows named on stderr; the results hold every one. */
const SHOWN_PROBLEMS = 20;

async function single(
  ctx: CommandContext,
  opts: DryRunOptions,
  lookbacks: import('../ingest/dry-run/input.js').Lookbacks,
): Promise<number> {
  const [{ buildDryRunRequest }, { DRY_RUN_REASONS }] = await Promise.all([
    import('../ingest/dry-run/input.js'),
    import('../schema/dry-run.js'),
  ]);
  const check = buildDryRunRequest(opts.ssn, opts.email, lookbacks);
  if (!check.ok) {
    throw new UsageError(`dry-run: ${check.problems.join('; ')}`, {
      hint: 'e.g. leadctl dry-run --ssn 123-45-6789, or --email ann@example.com, or --file applicants.csv',
    });
  }
  const api = await ctx.api();
  const result = await api.dryRun(check.request);
  const reason = result.reason ?? undefined;
  const words = reason === undefined ? undefined : ((DRY_RUN_REASONS as Record<string, string>)[reason] ?? reason);
  await ctx.output.document(
    { pass: result.pass, ...(result.pass ? {} : { reason: reason ?? null, reason_text: words ?? null }) },
    () =>
      result.pass ? 'PASS' : `FAIL: ${words ?? 'no reason given'}${reason && words !== reason ? ` (${reason})` : ''}`,
  );
  return result.pass ? ExitCode.OK : ExitCode.REJECTED;
}

async function bulk(
  ctx: CommandContext,
  opts: DryRunOptions,
  lookbacks: import('../ingest/dry-run/input.js').Lookbacks,
  files?: RunFiles,
): Promise<number> {
  const [{ openDryRunFile }, job, { parsePositiveInt, parseRetries }, { checkOutputPath, exportToFile }] =
    await Promise.all([
      import('../ingest/dry-run/input.js'),
      import('../jobs/dry-run-bulk.js'),
      import('../ingest/date-flags.js'),
      import('../ingest/table/writer.js'),
    ]);
  if (opts.ssn !== undefined || opts.email !== undefined)
    throw new UsageError('--file checks the rows of a file: leave out --ssn and --email', {
      hint: 'one applicant: `leadctl dry-run --ssn 123-45-6789`; a file of them: `leadctl dry-run --file applicants.csv`',
    });
  const concurrency = parsePositiveInt(opts.concurrency, '--concurrency', 32);
  const retries = parseRetries(opts.retries);
  const { resolve } = await import('node:path');
  if (
    opts.out !== undefined &&
    opts.file !== '-' &&
    resolve(ctx.io.cwd, opts.out) === resolve(ctx.io.cwd, opts.file!)
  ) {
    throw new UsageError(`--out ${opts.out} is the input file itself; write the results to another file`, {
      hint: 'e.g. `leadctl dry-run --file applicants.csv --out checked.csv`',
    });
  }
  if (opts.out !== undefined) checkOutputPath(opts.out, ctx.io.cwd, '--out');
  const file = await openDryRunFile(opts.file!, ctx.io, {
    ssnColumn: opts.ssnColumn,
    emailColumn: opts.emailColumn,
    lookbacks,
  });
  ctx.log.debug(
    `dry-run: ${file.name}: ssn column ${file.ssnColumn ?? '(none)'}, email column ${file.emailColumn ?? '(none)'}`,
  );
  const { count, seconds: inWords } = await import('../output/words.js');
  const api = await ctx.api();
  const progress = ctx.progress(`Checking ${file.name}…`);
  // Ctrl-C or SIGTERM stops the run (130 or 143): an --out file is not written, its partial copy removed.
  const { signal, release } = abortOnSignal(ctx.io);
  const settings = { concurrency, retries, signal };
  const started = ctx.io.now().getTime();
  let done = 0;
  // Rows that were not checked are told on stderr too, grouped by kind of reason with the first row of each.
  const { reasonKind } = await import('../jobs/push/rejects.js');
  const unchecked = new Map<string, { count: number; first: import('../jobs/dry-run-bulk.js').DryRunRowResult }>();
  let uncheckedCount = 0;
  const onRow = (row: import('../jobs/dry-run-bulk.js').DryRunRowResult) => {
    if (row.status === 'invalid' || row.status === 'error') {
      uncheckedCount++;
      const kind = reasonKind(undefined, row.reason);
      const group = unchecked.get(kind);
      if (group) group.count++;
      else if (unchecked.size < SHOWN_PROBLEMS) unchecked.set(kind, { count: 1, first: row });
    }
    progress.update(`Checked ${count(++done, 'row')} of ${file.name}`);
    if (files) {
      files.recorder.settled(1);
      if (row.status !== 'passed') {
        const kind = { failed: 'failed', invalid: 'invalid', error: 'not checked' }[row.status];
        files.recorder.sample(
          `${kind}: ${row.status === 'failed' ? row.reason : reasonKind(undefined, row.reason)}`,
          () => `row ${row.row}: ${row.reason}`,
        );
      }
    }
  };

  let summary: import('../jobs/dry-run-bulk.js').DryRunBulkSummary;
  try {
    if (opts.out !== undefined) {
      summary = await exportToFile(resolve(ctx.io.cwd, opts.out), async (out) => {
        const writer = job.dryRunCsvWriter(file.header, out, { raw: ctx.io.csv?.raw });
        const s = await job.runDryRunBulk(api, file, settings, async (row) => {
          await writer.write(row);
          onRow(row);
        });
        await writer.end();
        return s;
      });
    } else {
      // Without --out the results are the command's output, in the chosen format.
      const columns = [
        ...file.header.map((h, i) => ({
          key: h,
          value: (r: import('../jobs/dry-run-bulk.js').DryRunRowResult) => r.cells[i] ?? '',
          // On a table, the other columns' long numbers (a second SSN column, an account number) too.
          ...(h === file.ssnColumn
            ? { mask: 'ssn' as const }
            : { format: (v: unknown) => maskLongNumbers(String(v ?? '')) }),
        })),
        { key: job.PASS_COLUMN },
        { key: job.REASON_COLUMN },
      ];
      const writer = await ctx.output.stream(columns);
      summary = await job.runDryRunBulk(api, file, settings, async (row) => {
        await writer.write(row);
        onRow(row);
      });
      await writer.end();
    }
  } catch (err) {
    throw signal.aborted ? signal.reason : err;
  } finally {
    release();
  }
  progress.stop();
  if (uncheckedCount > 0) {
    const groups = [...unchecked.entries()].sort((x, y) => y[1].count - x[1].count);
    const width = Math.max(...groups.map(([, g]) => String(g.count).length));
    ctx.log.warn(
      `${count(uncheckedCount, 'row')} not checked, by reason (first of each; every row has its reason in the results):`,
    );
    for (const [kind, g] of groups) {
      ctx.log.warn(`  ${String(g.count).padStart(width)}  ${kind}`);
      ctx.log.warn(
        `  ${''.padStart(width)}    e.g. ${formatLocation({ file: file.name, row: g.first.row })}${g.first.reason}`,
      );
    }
    const grouped = groups.reduce((n, [, g]) => n + g.count, 0);
    if (uncheckedCount > grouped) ctx.log.warn(`  ${uncheckedCount - grouped} more, for other reasons`);
  }
  const elapsed = (ctx.io.now().getTime() - started) / 1000;
  const document = {
    file: file.name,
    out: opts.out ?? null,
    ...summary,
    elapsed_seconds: Math.round(elapsed * 10) / 10,
  };
  const text = [
    `${count(summary.rows, 'row')} read from ${file.name} in ${inWords(elapsed)}: ${summary.passed} passed, ${summary.failed} failed, ${summary.invalid} invalid${summary.errors ? `, ${summary.errors} could not be checked` : ''}.`,
    ...Object.entries(summary.reasons).map(([reason, n]) => `  failed (${reason}): ${n}`),
    ...(opts.out ? [`Results written to ${opts.out}.`] : []),
  ].join('\n');
  if (opts.out !== undefined) await ctx.output.document(document, () => text);
  else ctx.log.info(text);
  const checked = summary;
  files?.describe(async (run, code) =>
    (await import('../jobs/run-facts.js')).dryRunFacts(checked, code, opts.out ?? null, run),
  );
  return job.dryRunBulkExitCode(summary);
}

function declare(parent: Command) {
  return addRunFileOptions(
    parent
      .command('dry-run')
      .description(
        'was this applicant already bought, or underwritten recently? PASS (exit 0) or FAIL (exit 4) with the reason',
      )
      .option('--ssn <ssn>', 'social security number (dashes and spaces are ignored)')
      .option('--email <email>', 'email address')
      .option(
        '--purchased-lookback <days|off>',
        'previously-purchased window in days, or off (service default: all time)',
      )
      .option(
        '--underwriting-lookback <days|off>',
        'underwriting-cost window in days, or off (service default: 3 days)',
      )
      .addOption(
        new Option('--file <csv>', 'check every row of a CSV with ssn and/or email columns (- for stdin)').conflicts([
          'ssn',
          'email',
        ]),
      )
      .option('--out <csv>', 'with --file: write the input columns plus pass and reason to this CSV')
      .option('--ssn-column <name>', 'with --file: header of the SSN column (default: ssn, social_security_number…)')
      .option('--email-column <name>', 'with --file: header of the email column (default: email, email_address…)')
      .option('--concurrency <n>', 'with --file: rows checked at once', '4')
      .option(
        '--retries <n>',
        'with --file: further attempts for a row that still fails after the client retries',
        '2',
      ),
    'with --file: ',
  ).addHelpText(
    'after',
    [
      '',
      'Reasons: previously_purchased (an accepted lead with this SSN or email within the window),',
      '         underwriting_cost (underwriting money spent on it within the window).',
      'Exit codes: 0 pass; 4 fail; 2 invalid input. With --file: 0 every row passed, 4 some rows failed',
      'or were invalid, 5 some rows could not be checked (service unavailable).',
    ].join('\n'),
  );
}

/** The options as commander parses them, typed from their declaration. */
type DryRunOptions = ReturnType<ReturnType<typeof declare>['opts']>;

export const register = defineCommand(declare, async (ctx, _args, opts) => {
  const { lookbacksFrom } = await import('../ingest/dry-run/input.js');
  const lookbacks = lookbacksFrom(opts);
  if (opts.file !== undefined) {
    const { withRunFiles } = await import('./run-files.js');
    return withRunFiles(ctx, 'dry-run', opts, [opts.file], (files) => bulk(ctx, opts, lookbacks, files));
  }
  if (opts.report !== undefined || opts.metricsFile !== undefined) {
    throw new UsageError('--report and --metrics-file go with --file', {
      hint: 'e.g. `leadctl dry-run --file applicants.csv --report report.html`',
    });
  }
  if (opts.out !== undefined || opts.ssnColumn !== undefined || opts.emailColumn !== undefined) {
    throw new UsageError('--out, --ssn-column and --email-column go with --file', {
      hint: 'e.g. `leadctl dry-run --file applicants.csv --ssn-column SSN --out checked.csv`',
    });
  }
  return single(ctx, opts, lookbacks);
});
