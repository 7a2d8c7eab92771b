import { type Command, InvalidArgumentError, Option, type OptionValues } from '@commander-js/extra-typings';
import type { CommandContext } from './context.js';
import { defineCommand, defineGroup } from './command.js';
import { count } from '../output/words.js';
import { addRunFileOptions, type RunFiles } from './run-files.js';
import { environmentError, ExitCode, InputError, UsageError, ValidationError } from '../errors.js';
import type { RemovalLimit } from '../jobs/list-diff.js';
import { removalLimit } from './parse.js';
import { abortOnSignal } from '../io/io.js';

const TYPE_HELP =
  'list type: ssn, ssn4, zip, phone, email, routing, employer, affiliate, or the service name ' +
  '("Social Security Numbers", "Last Four of Social Security Numbers", "ZIP Codes", "Telephone Numbers", ' +
  '"Email Addresses", "Bank Routing Numbers", "Employer Names", "Affiliates")';

const listId = (value: string): number => {
  if (!/^[1-9]\d*$/.test(value.trim())) throw new InvalidArgumentError('a list id is a positive whole number.');
  return Number(value.trim());
};

const pageNumber = (value: string): number => {
  if (!/^[1-9]\d*$/.test(value.trim())) throw new InvalidArgumentError('--page takes a page number from 1.');
  return Number(value.trim());
};

/** What create and update get: the list (update only), the file, and their shared flags. */
type UploadOptions = UploadFlags & { id?: number; input: string; maxRemoved?: RemovalLimit };
type UploadFlags = ReturnType<ReturnType<typeof uploadOptions<[], Record<never, never>>>['opts']>;

async function upload(ctx: CommandContext, mode: 'create' | 'update', options: UploadOptions): Promise<number> {
  const { withRunFiles } = await import('./run-files.js');
  return withRunFiles(ctx, `lists ${mode}`, options, [options.input], (files) => uploadRun(ctx, options, files));
}

/** create and update share everything but the list id. */
async function uploadRun(ctx: CommandContext, opts: UploadOptions, files: RunFiles | undefined): Promise<number> {
  const job = await import('../jobs/list-upload.js');
  const { describeCsvFrom, describeRead } = await import('./views/list-report.js');
  const { id, input } = opts;

  // Refuse a bad name or type before touching the file; update may take them from the list.
  let nameInput = opts.name;
  let typeInput = opts.type;
  if (nameInput !== undefined) job.checkListName(nameInput);
  if (typeInput !== undefined) job.checkListType(typeInput);
  if (id !== undefined && (nameInput === undefined || typeInput === undefined)) {
    const current = await (await ctx.api()).getList(id);
    nameInput ??= current.name;
    typeInput ??= current.type;
    ctx.log.info(
      `List ${id} keeps its ${[opts.name === undefined ? `name "${current.name}"` : '', opts.type === undefined ? `type ${current.type}` : ''].filter(Boolean).join(' and ')}`,
    );
  }
  const name = job.checkListName(nameInput);
  const type = job.checkListType(typeInput);

  const record = opts.validateOnly ? undefined : await openRecord(ctx, true);
  const { LIST_VALUE_KINDS } = await import('../ingest/lists/normalise.js');
  const { DEFAULT_REMOVAL_LIMIT, describeChanges, describeLimit, diffList, listDigests, removesTooMany } = await import(
    '../jobs/list-diff.js'
  );
  const progress = ctx.progress();
  const { signal, release } = abortOnSignal(ctx.io);
  let result;
  try {
    result = await job.runListUpload(
      {
        input,
        name,
        type,
        listId: id,
        column: opts.column,
        header: opts.header,
        skipInvalid: opts.skipInvalid === true,
        validateOnly: opts.validateOnly === true,
        rejectsPath: opts.rejects,
      },
      {
        io: ctx.io,
        api: () => ctx.api(),
        signal,
        beforeUpload: async (values, collected) => {
          const { confirm } = await import('../output/prompt.js');
          if (id !== undefined) {
            progress.stop();
            const changes = record?.list(id) ? diffList(record, id, LIST_VALUE_KINDS[type], collected) : undefined;
            const what = changes
              ? describeChanges(changes)
              : 'no record here of its current values, so what changes is unknown';
            if (!changes && opts.maxRemoved !== undefined)
              ctx.log.warn(
                `Warning: --max-removed is not applied: there is no record here of list ${id}'s values (last uploaded from another machine, or the state folder is new)`,
              );
            const from = input === '-' ? 'stdin' : input;
            ctx.log.info(`List ${id} ("${name}") from ${from}: ${what}`);
            // A cut-short export (a failed job upstream, a full disk) would lift most of a suppression
            // list, and with --yes nobody would see it before the leads it should stop come in. Asked
            // on a terminal, the person answering sees it in the question instead.
            const limit = opts.maxRemoved ?? DEFAULT_REMOVAL_LIMIT;
            if (changes && removesTooMany(changes, limit)) {
              const before = changes.removed + changes.unchanged;
              const removal = `${from} would remove ${changes.removed.toLocaleString('en-US')} of the ${count(before, 'value')} last uploaded from here (${Math.round((changes.removed * 100) / before)}%)`;
              if (opts.yes === true)
                throw new UsageError(
                  `list ${id}: ${removal}, more than --max-removed allows (${describeLimit(limit)}); nothing was sent`,
                  {
                    hint: `check that the file is whole (\`leadctl lists diff ${id} FILE\` shows the changes); if the removals are meant, add --max-removed 100%`,
                  },
                );
              ctx.log.warn(`Warning: ${removal}: is the file whole?`);
            }
            await confirm(
              ctx.io,
              `Replace every value of list ${id} ("${name}") with the ${count(values, 'value')} of ${from}?`,
              { yes: opts.yes === true },
            );
            return changes;
          }
          // A second list with an existing name is nearly always a mistake (the service allows it).
          const api = await ctx.api();
          const same: number[] = [];
          for await (const list of api.allLists())
            if (list.name.trim().toLowerCase() === name.trim().toLowerCase()) same.push(list.id);
          if (same.length === 0) return;
          progress.stop();
          await confirm(ctx.io, `A list named "${name}" exists already (id ${same.join(', ')}); create another one?`, {
            yes: opts.yes === true,
          });
        },
        onEvent: (event) => {
          if (event.type === 'reading') {
            ctx.log.info(
              describeRead({
                file: event.file,
                format: event.format,
                column: event.column ?? null,
                header_row: event.headerRow ?? null,
              }),
            );
          } else if (event.type === 'csv-from') {
            ctx.log.info(describeCsvFrom(event.file, event.row, event.delimiter));
          } else if (event.type === 'rows') {
            progress.update(`Read ${event.rows.toLocaleString('en-US')} rows`);
          } else {
            progress.update(`Uploading ${count(event.items, 'value')}`);
          }
        },
      },
    );
  } catch (err) {
    progress.fail();
    record?.close();
    throw err;
  } finally {
    release();
  }
  progress.stop();
  let unrecorded: unknown;
  if (record) {
    // What was uploaded from here, for the next `lists diff` and `lists update` (keyed digests only).
    try {
      if (result.outcome === 'uploaded' && result.list)
        record.rememberList(result.list.id, type, listDigests(record, result.values), ctx.io.now().getTime());
    } catch (err) {
      // The list is stored whatever the disk says: report that first, then what failed.
      unrecorded = err;
    } finally {
      record.close();
    }
  }
  if (files) {
    const done = result;
    files.recorder.settled(done.summary.uploaded);
    files.describe(async (run, code, error) =>
      (await import('../jobs/run-facts.js')).listFacts(done, code, run, error),
    );
  }
  const code = await report(ctx, result);
  if (unrecorded === undefined) return code;
  const failure = environmentError(unrecorded);
  if (!failure) throw unrecorded;
  ctx.log.warn(`Error: ${failure.message}`);
  if (failure.hint) ctx.log.warn(`Hint: ${failure.hint}`);
  return failure.exitCode;
}

/** The record of what this profile, base URL and client uploaded (see `state show`). */
async function openRecord(ctx: CommandContext, create: boolean) {
  const [{ DeltaRecord }, { stateDir }] = await Promise.all([
    import('../jobs/delta/record.js'),
    import('../config/state-dir.js'),
  ]);
  const resolved = await ctx.config.credentials();
  return DeltaRecord.open(
    stateDir(ctx.io.env),
    ctx.config.dir,
    { profile: resolved.profile.value, baseUrl: resolved.baseUrl.value, clientId: resolved.clientId?.value },
    create,
    (line) => ctx.log.warn(line),
  );
}

const diff = defineCommand(
  (lists) =>
    lists
      .command('diff')
      .description(
        'what `lists update ID FILE` would add and remove, against the values last uploaded to that list from here',
      )
      .argument('<id>', 'list id', listId)
      .argument('<file>', 'the file of values, or - for standard input')
      .option('--type <type>', `${TYPE_HELP} (default: the type of the last upload)`)
      .option('--column <name|number>', 'the column holding the values: a header name or a number from 1')
      .option('--header', 'the first non-blank row is a header (default: detected)')
      .option('--no-header', 'the file has no header row')
      .option('--show', 'also list the added values (masked where personal)'),
  async (ctx, [id, input], opts) => {
    const [job, { DEFAULT_REMOVAL_LIMIT, describeLimit, diffList, removesTooMany }, { LIST_VALUE_KINDS }] =
      await Promise.all([
        import('../jobs/list-upload.js'),
        import('../jobs/list-diff.js'),
        import('../ingest/lists/normalise.js'),
      ]);
    const record = await openRecord(ctx, false);
    try {
      const known = record?.list(id);
      if (!record || !known) {
        throw new UsageError(
          `no record of list ${id}'s values on this machine: it was created or last updated elsewhere (the service never returns a list's values)`,
          {
            hint: `\`leadctl lists update ${id} FILE\` from here records what it uploads; later diffs compare against that`,
          },
        );
      }
      const type = job.checkListType(opts.type ?? known.type);
      const result = await job.runListUpload(
        {
          input,
          name: `list ${id}`,
          type,
          column: opts.column,
          header: opts.header,
          skipInvalid: true,
          validateOnly: true,
        },
        { io: ctx.io },
      );
      const s = result.summary;
      const changes = diffList(record, id, LIST_VALUE_KINDS[type], result.values, opts.show === true);
      const doc = {
        list_id: id,
        file: s.file,
        type,
        ...changes,
        rows_read: s.rows_read,
        rejected: s.rejected,
        last_upload: { values: known.count, at: new Date(known.uploadedAt).toISOString() },
        // Whether `lists update --yes` would refuse this file without --max-removed.
        refused_by_default: removesTooMany(changes, DEFAULT_REMOVAL_LIMIT),
      };
      const n = (x: number) => x.toLocaleString('en-US');
      await ctx.output.document(doc, () =>
        [
          `List ${id} against ${s.file}: ${n(changes.added)} added, ${n(changes.removed)} removed, ${n(changes.unchanged)} unchanged`,
          `(last uploaded from here: ${count(known.count, 'value')}, ${doc.last_upload.at})`,
          ...(doc.refused_by_default
            ? [
                `lists update would refuse this file: it removes more than ${describeLimit(DEFAULT_REMOVAL_LIMIT)} of the list (add --max-removed 100% if that is meant)`,
              ]
            : []),
          ...(s.rejected
            ? [
                `${n(s.rejected)} row${s.rejected === 1 ? ' of the file is' : 's of the file are'} invalid and would not be uploaded (lists update --validate-only lists them)`,
              ]
            : []),
          ...(changes.added_values?.length ? ['added:', ...changes.added_values.map((v) => `  ${v}`)] : []),
        ].join('\n'),
      );
    } finally {
      record?.close();
    }
  },
);

async function report(ctx: CommandContext, result: import('../jobs/list-upload.js').ListUploadResult): Promise<number> {
  const { printProblems, SUMMARY_COLUMNS } = await import('./views/list-report.js');
  const s = result.summary;
  const details = { summary: s, problems: result.problems, problem_count: result.problemCount };
  const stored = result.outcome === 'uploaded' || result.outcome === 'validated';
  // Nothing was stored: the rejects file that could not be written is the error.
  if (result.rejectsFailure && !stored) throw result.rejectsFailure;
  switch (result.outcome) {
    case 'invalid':
      await printProblems(ctx.io.stderr, result, `${s.file}: ${count(result.problemCount, 'invalid row')}:`);
      throw new InputError(
        `${count(result.problemCount, 'invalid row')}${s.validate_only ? '' : '; nothing was uploaded'}`,
        { file: s.file },
        {
          hint: 'fix the rows listed, or add --skip-invalid to upload only the valid values (--rejects FILE lists every problem)',
          details,
        },
      );
    case 'empty':
      throw new InputError(
        `no valid values to upload (${count(s.rows_read, 'row')} read: ${s.blank.toLocaleString('en-US')} blank, ${s.rejected.toLocaleString('en-US')} rejected)`,
        { file: s.file },
        {
          hint:
            s.rows_read === s.blank
              ? 'the file has no values (only blank rows, or a header alone)'
              : `every value was invalid for the type ${s.type}: check --type${s.column === null ? '' : ' and --column'}`,
          details,
        },
      );
    case 'refused':
      await printProblems(
        ctx.io.stderr,
        result,
        `The service refused the list (${result.serviceMessage ?? 'HTTP 422'}); rows of ${s.file}:`,
      );
      throw new ValidationError(
        `the service refused the list with ${count(result.problemCount, 'problem')}; nothing was stored`,
        {},
        {
          hint: 'the rows above are numbered as in the input file',
          details,
        },
      );
    case 'validated':
    case 'uploaded':
      if (result.problemCount > 0) {
        await printProblems(ctx.io.stderr, result, `${s.file}: ${count(result.problemCount, 'invalid row')} skipped:`);
      }
      await ctx.output.record(s, SUMMARY_COLUMNS, { json: s });
      if (result.outcome === 'uploaded') {
        ctx.log.info(`Uploaded ${count(s.uploaded, 'value')} to list ${s.list_id} ("${s.name}").`);
      } else {
        ctx.log.info(`Checked: ${count(s.distinct, 'value')} would be uploaded; nothing was sent.`);
      }
      if (result.rejectsFailure) {
        // The list is stored (the summary says what); the exit code says what failed.
        ctx.log.warn(`Error: ${result.rejectsFailure.message}`);
        if (result.rejectsFailure.hint) ctx.log.warn(`Hint: ${result.rejectsFailure.hint}`);
        return result.rejectsFailure.exitCode;
      }
      return result.problemCount > 0 ? ExitCode.REJECTED : ExitCode.OK;
  }
}

const get = defineCommand(
  (lists) =>
    lists
      .command('get')
      .description("show a list's metadata (its values are never returned by the service)")
      .argument('<id>', 'list id', listId),
  async (ctx, [id]) => {
    const { LIST_COLUMNS, listJson } = await import('./views/list-report.js');
    const list = await (await ctx.api()).getList(id);
    await ctx.output.record(list, LIST_COLUMNS, { json: listJson(list) });
  },
);

const ls = defineCommand(
  (lists) =>
    lists
      .command('ls')
      .description("list the account's lists: id, name, type, archived, created, updated")
      .option('--page <n>', 'page to show (default: 1)', pageNumber)
      .option('--all', 'every page'),
  async (ctx, _args, opts) => {
    if (opts.all && opts.page !== undefined)
      throw new UsageError('--page and --all cannot be used together', {
        hint: '--page N for one page, or --all for every page: `leadctl lists ls --all`',
      });
    const { LIST_COLUMNS, listJson } = await import('./views/list-report.js');
    const api = await ctx.api();
    if (opts.all) {
      const lists = [];
      const bar = ctx.progress();
      try {
        for await (const list of api.allLists({
          onPage: (page, last) => bar.update(`lists: page ${page} of ${last} received`),
        }))
          lists.push(list);
      } finally {
        bar.stop();
      }
      await ctx.output.list(lists, LIST_COLUMNS, { jsonRow: listJson, empty: 'No lists.' });
      return;
    }
    const page = await api.listPage(opts.page ?? 1);
    await ctx.output.list(page.data, LIST_COLUMNS, {
      jsonRow: listJson,
      empty: page.current_page > 1 ? `No lists on page ${page.current_page}.` : 'No lists.',
    });
    if (page.last_page > 1 || page.current_page > page.last_page) {
      const next =
        page.current_page < page.last_page
          ? `; --page ${page.current_page + 1} for the next, --all for every page`
          : '';
      ctx.log.info(`Page ${page.current_page} of ${page.last_page} (${page.total} lists)${next}`);
    }
  },
);

function uploadOptions<A extends unknown[], O extends OptionValues>(cmd: Command<A, O>, mode: 'create' | 'update') {
  const required = mode === 'create';
  return addRunFileOptions(
    cmd
      .addOption(
        new Option(
          '--name <name>',
          `list name, at most 255 characters${required ? '' : ' (default: keep the current name)'}`,
        ).makeOptionMandatory(required),
      )
      .addOption(
        new Option(
          '--type <type>',
          TYPE_HELP + (required ? '' : ' (default: keep the current type)'),
        ).makeOptionMandatory(required),
      )
      .option(
        '--column <name|number>',
        'the column holding the values: a header name or a number from 1 (default: the only column, or the one whose header names the type)',
      )
      .option('--header', 'the first non-blank row is a header (default: detected)')
      .option('--no-header', 'the file has no header row')
      .option(
        '--skip-invalid',
        'upload the valid values even if some rows are invalid (exit code 4 when some were skipped)',
      )
      .option('--rejects <file>', 'write every problem to this CSV file (file, row, value, reason; SSNs masked)')
      .option('--validate-only', 'read, normalise and check the file; send nothing')
      .addHelpText(
        'after',
        '\nExit codes: 0 uploaded; 4 uploaded, invalid rows skipped (--skip-invalid); 2 invalid rows (nothing sent),\n' +
          `bad flags, ${mode === 'update' ? 'not confirmed, more removed than --max-removed allows' : 'not confirmed'}; 3 authentication failed;\n` +
          '5 the service stayed unavailable; 130/143 stopped by Ctrl-C or SIGTERM.',
      )
      .option(
        '-y, --yes',
        mode === 'update'
          ? 'replace the values without asking (needed when there is no terminal to ask on)'
          : 'create the list even if one with this name exists, without asking',
      ),
  );
}

const create = defineCommand(
  (lists) =>
    uploadOptions(
      lists
        .command('create')
        .description('create a list from FILE (CSV, one value per line, JSON array; .gz; - for stdin)')
        .argument('<file>', 'the file of values, or - for standard input'),
      'create',
    ),
  (ctx, [input], opts) => upload(ctx, 'create', { ...opts, input }),
);

const update = defineCommand(
  (lists) =>
    uploadOptions(
      lists
        .command('update')
        .description("replace a list's values with those of FILE")
        .argument('<id>', 'list id', listId)
        .argument('<file>', 'the file of values, or - for standard input'),
      'update',
    ).option(
      '--max-removed <n|percent>',
      'with --yes, refuse the update when it would remove more than this many of the values last uploaded from here: a number, or a percentage (default: 50%; asked on a terminal, it is a warning)',
      removalLimit,
    ),
  (ctx, [id, input], opts) => upload(ctx, 'update', { ...opts, id, input }),
);

export const register = defineGroup(
  'lists',
  'suppression lists: upload from CSV, text or JSON with local validation; show and list them',
  [create, update, diff, get, ls],
);
