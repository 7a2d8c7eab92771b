import { Option } from '@commander-js/extra-typings';
import type { ApiClient } from '../api/client.js';
import type { DictionaryEntry } from '../ingest/leads/columns.js';
import { defineCommand, defineGroup } from './command.js';
import { count } from '../output/words.js';
import { collect } from './parse.js';
import type { CommandContext } from './context.js';
import { NotFoundError, UsageError } from '../errors.js';
import { abortOnSignal } from '../io/io.js';

/** The data dictionary, from the per-profile cache (a day) or the service. */
async function dictionaryFor(ctx: CommandContext, api: ApiClient, refresh: boolean): Promise<DictionaryEntry[]> {
  const [{ loadDictionary }, { join }] = await Promise.all([
    import('../config/dictionary-cache.js'),
    import('node:path'),
  ]);
  const credentials = await ctx.config.credentials();
  const cached = await loadDictionary(
    {
      dir: join(ctx.config.dir, 'cache'),
      profile: credentials.profile.value,
      account: `${api.baseUrl} ${credentials.clientId?.value ?? ''}`,
      now: ctx.io.now(),
    },
    () => api.dictionary(),
    refresh,
  );
  ctx.log.debug(
    `dictionary: ${cached.entries.length} attributes ${cached.fromCache ? `from the cache (fetched ${cached.fetchedAt.toISOString()})` : 'fetched from the service'}`,
  );
  return cached.entries;
}

const dictionary = defineCommand(
  (leads) =>
    leads
      .command('dictionary')
      .description(
        'the data dictionary: every attribute (map id, category, name, column, type); cached per profile for a day',
      )
      .option('--search <term>', 'only attributes whose id, category, subcategory, name or column contains TERM')
      .option('--category <name>', 'only attributes of this category')
      .option('--refresh', 'fetch a fresh copy instead of the cached one'),
  async (ctx, _args, opts) => {
    const { searchDictionary, categoriesOf } = await import('../ingest/leads/columns.js');
    const api = await ctx.api();
    const entries = await dictionaryFor(ctx, api, opts.refresh === true);
    const found = searchDictionary(entries, { search: opts.search, category: opts.category });
    if (
      found.length === 0 &&
      opts.category &&
      !entries.some((e) => e.category.toLowerCase() === opts.category!.trim().toLowerCase())
    ) {
      ctx.log.warn(`No category "${opts.category}". Categories: ${categoriesOf(entries).join(', ')}`);
    }
    await ctx.output.list(
      found,
      ['id', 'category', 'subcategory', 'name', 'column', 'type'].map((key) => ({ key })),
      {
        empty: `No attributes match${opts.search ? ` "${opts.search}"` : ''}${opts.category ? ` in category "${opts.category}"` : ''}.`,
      },
    );
  },
);

const ids = defineCommand(
  (leads) =>
    leads
      .command('ids')
      .description(
        'lead ids, streamed as they arrive; one page unless --all or --limit (the next cursor is printed on stderr)',
      )
      .option('--date <date>', 'leads of this UTC day: YYYY-MM-DD, today or yesterday')
      .option('--datetime <iso>', 'leads created at or after this time, e.g. 2024-01-05T14:00:00Z')
      .option('--per-page <n>', 'ids per request (service default 100, at most 1000)')
      .addOption(new Option('--limit <n>', 'stop after N ids, following the cursor across pages').conflicts('all'))
      .option('--all', 'follow the cursor to the last page')
      .option('--cursor <cursor>', 'continue where an earlier run stopped'),
  async (ctx, _args, opts) => {
    const [
      { parseDateFlag, parseDateTimeFlag, parsePositiveInt },
      { streamLeadIds },
      { MAX_LEAD_IDS_PER_PAGE },
      { PagingError },
    ] = await Promise.all([
      import('../ingest/date-flags.js'),
      import('../jobs/lead-ids.js'),
      import('../schema/lead-data.js'),
      import('../api/paging.js'),
    ]);
    const date = opts.date === undefined ? undefined : parseDateFlag(opts.date, ctx.io.now());
    const datetime = opts.datetime === undefined ? undefined : parseDateTimeFlag(opts.datetime);
    const perPage =
      opts.perPage === undefined ? undefined : parsePositiveInt(opts.perPage, '--per-page', MAX_LEAD_IDS_PER_PAGE);
    const limit = opts.limit === undefined ? undefined : parsePositiveInt(opts.limit, '--limit');
    const api = await ctx.api();

    const bar = ctx.progress();
    const progress = {
      pages: 0,
      ids: 0,
      nextCursor: undefined as string | undefined,
      onPage: (pages: number, count: number) => bar.update(`lead ids: page ${pages} received, ${count} ids so far`),
    };
    const format = ctx.output.format;
    // JSON is one document, so a failure can still be reported as one: it is written at the end.
    const buffered: number[] = [];
    const writer =
      format === 'ndjson' || format === 'csv'
        ? await ctx.output.stream<{ lead_id: number }>([{ key: 'lead_id' }])
        : undefined;
    let cursor: string | undefined = opts.cursor;
    try {
      const pages = streamLeadIds(
        api,
        { date, datetime, perPage, limit, all: opts.all === true, cursor: opts.cursor },
        progress,
      );
      for await (const page of pages) {
        for (const id of page) {
          if (format === 'json') buffered.push(id);
          else if (writer) await writer.write({ lead_id: id });
          else await ctx.output.write(`${id}\n`);
        }
        cursor = progress.nextCursor;
      }
    } catch (err) {
      bar.stop();
      // After a paging fault the same cursor would only lead into it again.
      if (progress.ids > 0 && cursor && !(err instanceof PagingError))
        ctx.log.warn(`Stopped after ${progress.ids} ids; resume with --cursor ${cursor}`);
      throw err;
    } finally {
      await writer?.end();
    }
    bar.stop();
    if (format === 'json') await ctx.output.write(JSON.stringify(buffered) + '\n');

    ctx.log.info(
      `${progress.ids} lead id${progress.ids === 1 ? '' : 's'} in ${progress.pages} page${progress.pages === 1 ? '' : 's'}.`,
    );
    if (progress.nextCursor) {
      ctx.log.warn(`next_cursor: ${progress.nextCursor}`);
      const again = [
        'leadctl leads ids',
        date && `--date ${date}`,
        datetime && `--datetime ${datetime}`,
        perPage && `--per-page ${perPage}`,
        limit && `--limit ${limit}`,
        opts.all && '--all',
        `--cursor ${progress.nextCursor}`,
      ];
      ctx.log.info(`More ids may follow. Continue with: ${again.filter(Boolean).join(' ')}`);
    }
  },
);

const get = defineCommand(
  (leads) =>
    leads
      .command('get')
      .description('one or more leads, by column name (SSNs and bank account numbers masked in tables)')
      .argument('<id...>', 'lead ids')
      .option(
        '--columns <names>',
        'column names, display names or map ids from the dictionary (comma-separated, repeatable)',
        collect,
      )
      .option('--map-ids <ids>', 'map ids such as m1,m2 (comma-separated, repeatable)', collect)
      .option('--raw', 'key the values by map id instead of column name')
      .option('--no-mask', 'show SSNs and bank account numbers in full in tables')
      .option('--concurrency <n>', 'leads fetched at once', '4')
      .option('--refresh', 'fetch a fresh dictionary instead of the cached one'),
  async (ctx, [given], opts) => {
    const [
      { resolveColumns, splitList },
      { parsePositiveInt },
      { mapOrdered },
      { attemptRecord, failedRecordsExitCode, reasonOf },
      view,
      { MAP_ID_PATTERN },
    ] = await Promise.all([
      import('../ingest/leads/columns.js'),
      import('../ingest/date-flags.js'),
      import('../jobs/ordered-pool.js'),
      import('../jobs/record-retry.js'),
      import('../output/lead-view.js'),
      import('../schema/lead-data.js'),
    ]);
    const leadIds = given.map((id) => parsePositiveInt(id, 'lead ID'));
    const mapIds = splitList(opts.mapIds);
    const bad = mapIds.filter((m) => !MAP_ID_PATTERN.test(m));
    if (bad.length)
      throw new UsageError(
        `--map-ids: ${bad.map((b) => `"${b}"`).join(', ')} ${bad.length === 1 ? 'is not a map id' : 'are not map ids'} (m followed by a number, e.g. m1)`,
        { hint: 'use --columns for column names' },
      );
    const concurrency = parsePositiveInt(opts.concurrency, '--concurrency', 32);
    const api = await ctx.api();
    const needDictionary = !opts.raw || ctx.output.isHuman || (opts.columns?.length ?? 0) > 0;
    const dict = needDictionary ? await dictionaryFor(ctx, api, opts.refresh === true) : [];
    const requested = [...resolveColumns(splitList(opts.columns), dict).map((e) => e.id), ...mapIds];
    const unique = [...new Set(requested)];
    // With a filter, keep the lead's id in the answer so rows of several leads can be told apart.
    const leadIdAttribute = dict.find((e) => e.column === 'lead_id')?.id ?? 'm1';
    const filter = unique.length && !unique.includes(leadIdAttribute) ? [leadIdAttribute, ...unique] : unique;

    const found: { id: number; data: Record<string, unknown> }[] = [];
    const missing: { lead_id: number; reason: string }[] = [];
    let firstError: unknown;
    const failures: unknown[] = [];
    const results = mapOrdered(leadIds, concurrency, (id) => attemptRecord(() => api.lead(id, filter), { retries: 0 }));
    let i = 0;
    for await (const r of results) {
      const id = leadIds[i++]!;
      if (r.ok) found.push({ id, data: r.value });
      else {
        firstError ??= r.error;
        failures.push(r.error);
        missing.push({ lead_id: id, reason: r.error instanceof NotFoundError ? 'not found' : reasonOf(r.error) });
      }
    }
    if (leadIds.length === 1 && firstError) {
      if (firstError instanceof NotFoundError) {
        throw new NotFoundError(`lead ${leadIds[0]} was not found`, {
          hint: 'list the ids of a day with `leadctl leads ids --date YYYY-MM-DD`',
          details: firstError.details,
        });
      }
      throw firstError;
    }
    // CSV writers turn booleans into 1 and an empty cell; the words survive a spreadsheet better.
    if (ctx.output.format === 'csv') {
      for (const lead of found)
        for (const [k, v] of Object.entries(lead.data)) if (typeof v === 'boolean') lead.data[k] = String(v);
    }

    const keys = view.leadKeys(found, dict, filter.length ? filter : undefined);
    const columns = view.leadColumns(keys, dict, { raw: opts.raw === true, mask: opts.mask !== false });
    const toJson = (lead: { id: number; data: Record<string, unknown> }) =>
      Object.fromEntries(columns.map((c) => [c.key, c.value!(lead) ?? null]));
    if (ctx.output.isHuman) {
      for (const lead of found) {
        if (found.length > 1 || leadIds.length > 1) await ctx.output.write(`Lead ${lead.id}\n`);
        // One attribute per line: a lead has dozens of columns, too many for a wide table.
        await ctx.output.record(
          lead,
          columns.filter((c) => c.value!(lead) !== undefined),
        );
      }
    } else {
      // One shape however many ids were asked for: an array of leads (NDJSON: a line each).
      await ctx.output.list(found, columns, { jsonRow: toJson });
    }
    // The leads found are already on stdout: a thrown error would add a second JSON document there.
    for (const m of missing) ctx.log.warn(`lead ${m.lead_id}: ${m.reason}`);
    if (missing.length) {
      ctx.log.warn(`${missing.length} of ${leadIds.length} leads could not be read`);
      return failedRecordsExitCode(failures);
    }
  },
);

const exportLeadsCommand = defineCommand(
  (leads) =>
    leads
      .command('export')
      .description(
        'every lead of a day (or since a time) to CSV, one column per attribute headed by column names, in id order',
      )
      .option('--date <date>', 'leads of this UTC day: YYYY-MM-DD, today or yesterday')
      .option('--datetime <iso>', 'leads created at or after this time')
      .option(
        '--columns <names>',
        'only these columns (names, display names or map ids; comma-separated, repeatable)',
        collect,
      )
      .requiredOption(
        '--out <file>',
        'CSV file to write (- for stdout); written beside it under a temporary name and renamed when complete',
      )
      .option('--concurrency <n>', 'leads fetched at once', '4')
      .option('--retries <n>', 'further attempts for a lead that still fails after the client retries', '2')
      .option('--per-page <n>', 'ids per request when listing (default 1000, the most the service gives)')
      .option('--refresh', 'fetch a fresh dictionary instead of the cached one')
      .addHelpText(
        'after',
        '\nExit codes: 0 every lead exported; 4 some leads could not be read (listed on stderr); 5 the service stayed\nunavailable for some; 2 bad flags; 130/143 stopped by Ctrl-C or SIGTERM (no file written).',
      ),
  async (ctx, _args, opts) => {
    const [
      { parseDateFlag, parseDateTimeFlag, parsePositiveInt, parseRetries },
      { resolveColumns, splitList },
      job,
      { MAX_LEAD_IDS_PER_PAGE },
      { resolve: resolvePath },
    ] = await Promise.all([
      import('../ingest/date-flags.js'),
      import('../ingest/leads/columns.js'),
      import('../jobs/leads-export.js'),
      import('../schema/lead-data.js'),
      import('node:path'),
    ]);
    if (opts.date === undefined && opts.datetime === undefined) {
      throw new UsageError('leads export needs --date YYYY-MM-DD or --datetime ISO (or both)', {
        hint: 'e.g. leadctl leads export --date yesterday --out leads.csv',
      });
    }
    const date = opts.date === undefined ? undefined : parseDateFlag(opts.date, ctx.io.now());
    const datetime = opts.datetime === undefined ? undefined : parseDateTimeFlag(opts.datetime);
    const concurrency = parsePositiveInt(opts.concurrency, '--concurrency', 32);
    const retries = parseRetries(opts.retries);
    // The ids are only a means to the leads: as few listing requests as the service allows (a
    // 200,000-lead day took 100 s to list at its default 100 a page, 12 s at 1000).
    const perPage =
      opts.perPage === undefined
        ? MAX_LEAD_IDS_PER_PAGE
        : parsePositiveInt(opts.perPage, '--per-page', MAX_LEAD_IDS_PER_PAGE);

    const { checkOutputPath, exportToFile } = await import('../ingest/table/writer.js');
    if (opts.out !== '-') checkOutputPath(opts.out, ctx.io.cwd, '--out');
    const api = await ctx.api();
    const dict = await dictionaryFor(ctx, api, opts.refresh === true);
    const wanted = splitList(opts.columns);
    const columns = wanted.length ? resolveColumns(wanted, dict) : dict;
    const started = ctx.io.now().getTime();
    const progress = ctx.progress(
      `Listing lead ids${date ? ` of ${date}` : ''}${datetime ? ` from ${datetime}` : ''}…`,
    );
    const unknownSeen = new Set<string>();
    const onEvent = (e: import('../jobs/leads-export.js').ExportEvent) => {
      if (e.type === 'listing') progress.update(`Listing lead ids… ${count(e.ids, 'id')} so far`);
      else if (e.type === 'ids') progress.update(`Fetching ${count(e.total, 'lead')}…`);
      else if (e.type === 'lead')
        progress.update(`Fetched ${e.done}/${e.total} leads${e.failed ? ` (${e.failed} failed)` : ''}`);
      else {
        const fresh = e.mapIds.filter((m) => !unknownSeen.has(m));
        for (const m of fresh) unknownSeen.add(m);
        if (fresh.length)
          progress.note(
            `Note: the service sent ${fresh.join(', ')}, which the dictionary does not list; not exported (try --refresh)`,
          );
      }
    };
    // Ctrl-C or SIGTERM stops the export: the file is not written (its partial copy, personal data,
    // is removed) and the run ends 130 or 143, as a push does.
    const { signal, release } = abortOnSignal(ctx.io);
    const options = {
      date,
      datetime,
      columns,
      mapIds: wanted.length ? columns.map((c) => c.id) : undefined,
      concurrency,
      retries,
      perPage,
      csvRaw: ctx.io.csv?.raw,
      signal,
    };
    let result: import('../jobs/leads-export.js').ExportResult;
    try {
      result =
        opts.out === '-'
          ? await job.exportLeads(api, options, ctx.io.stdout, onEvent)
          : await exportToFile(resolvePath(ctx.io.cwd, opts.out), (out) => job.exportLeads(api, options, out, onEvent));
    } catch (err) {
      progress.fail(signal.aborted ? 'Export interrupted: nothing written' : 'Export failed');
      throw signal.aborted ? signal.reason : err;
    } finally {
      release();
    }
    const seconds = (ctx.io.now().getTime() - started) / 1000;
    if (result.missing.length)
      progress.fail(`Exported ${result.exported} of ${result.ids} leads; ${result.missing.length} missing`);
    else progress.succeed(`Exported ${result.exported} lead${result.exported === 1 ? '' : 's'}`);

    const summary = {
      file: opts.out === '-' ? 'stdout' : opts.out,
      ids: result.ids,
      exported: result.exported,
      missing: result.missing,
      columns: columns.length,
      elapsed_seconds: Math.round(seconds * 10) / 10,
    };
    const { seconds: inWords } = await import('../output/words.js');
    const ofLeads = `${result.exported.toLocaleString('en-US')} of ${count(result.ids, 'lead')}`;
    if (opts.out === '-') {
      ctx.log.info(`${ofLeads} exported in ${inWords(seconds)}.`);
    } else {
      await ctx.output.document(summary, () =>
        [
          `Wrote ${ofLeads} (${count(columns.length, 'column')}) to ${opts.out} in ${inWords(seconds)}.`,
          ...(result.ids === 0 ? ['No leads match; the file holds the header only.'] : []),
        ].join('\n'),
      );
    }
    if (result.missing.length) {
      for (const m of result.missing)
        ctx.log.warn(
          `lead ${m.lead_id}: missing after ${m.attempts} attempt${m.attempts === 1 ? '' : 's'}: ${m.reason}`,
        );
      return result.missingExitCode;
    }
  },
);

export const register = defineGroup(
  'leads',
  'lead data: ids of a day, one lead by column names, the data dictionary, CSV export',
  [dictionary, ids, get, exportLeadsCommand],
);
