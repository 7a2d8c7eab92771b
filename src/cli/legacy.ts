import type { LegacyResponse } from '../schema/legacy.js';
import { defineCommand, defineGroup } from './command.js';
import type { CommandContext } from './context.js';
import { ExitCode, InputError, LeadctlError, UsageError } from '../errors.js';

interface KeyOptions {
  apiKey?: string;
  apiKeyFile?: string;
  apiKeyStdin?: boolean;
}

/**
 * The campaign api key, from one place: --api-key-file (or LEADCTL_API_KEY_FILE), --api-key-stdin,
 * LEADCTL_API_KEY, or --api-key, which still works but is visible to every user in `ps` and is
 * kept in shell history: a warning says so. Undefined when none is given.
 */
async function readApiKey(ctx: CommandContext, opts: KeyOptions, stdinTaken: boolean): Promise<string | undefined> {
  const given = [
    opts.apiKey !== undefined && '--api-key',
    opts.apiKeyFile !== undefined && '--api-key-file',
    opts.apiKeyStdin && '--api-key-stdin',
  ].filter(Boolean);
  if (given.length > 1)
    throw new UsageError(`give the api key one way, not with ${given.join(' and ')}`, {
      hint: 'keep one: --api-key-file FILE is the safest (or LEADCTL_API_KEY in the environment)',
    });
  if (opts.apiKey !== undefined) {
    ctx.log.warn(
      'Warning: an api key given with --api-key can be read by other users of this machine (ps) and stays in your shell history; use LEADCTL_API_KEY, --api-key-file FILE or --api-key-stdin',
    );
    return opts.apiKey;
  }
  if (opts.apiKeyStdin) {
    if (stdinTaken)
      throw new UsageError('--api-key-stdin cannot be used when the leads come from stdin (-)', {
        hint: 'use LEADCTL_API_KEY or --api-key-file FILE',
      });
    const { secretFromStdin } = await import('../config/secret-input.js');
    return secretFromStdin(ctx.io, '--api-key-stdin');
  }
  const file = opts.apiKeyFile ?? (ctx.io.env.LEADCTL_API_KEY_FILE || undefined);
  if (file !== undefined) {
    const { secretFromFile } = await import('../config/secret-input.js');
    return secretFromFile(ctx.io, file, 'api key', (line) => ctx.log.warn(line));
  }
  return ctx.io.env.LEADCTL_API_KEY || undefined;
}

const KEY_HELP =
  'The campaign api key comes from --api-key-file FILE (or LEADCTL_API_KEY_FILE), --api-key-stdin, or LEADCTL_API_KEY;\n--api-key KEY still works but shows the key to every user in `ps` and keeps it in shell history.';

/** Prints one answer: text and an offers table for people, nothing yet for JSON (one document at the end). */
async function showResult(
  ctx: CommandContext,
  response: LegacyResponse,
  receivedAt: Date,
  title?: string,
): Promise<void> {
  if (!ctx.output.isHuman) return;
  const [{ legacyResultText }, { OFFER_COLUMNS }] = await Promise.all([
    import('./views/legacy-result.js'),
    import('../output/offers.js'),
  ]);
  const text = legacyResultText(response, { title, receivedAt, now: ctx.io.now() });
  await ctx.output.write(text.head);
  if (text.offers) await ctx.output.list(text.offers, OFFER_COLUMNS);
  // How to accept is guidance, not the answer: on stderr, and not with --quiet.
  if (text.tail) ctx.log.info(text.tail.trimEnd());
}

async function showRecords(
  ctx: CommandContext,
  records: import('./views/legacy-result.js').LegacyResultRecord[],
  single: boolean,
): Promise<void> {
  if (ctx.output.isHuman) return;
  const columns = ['lead', 'outcome', 'status', 'result', 'redirect_url', 'errors', 'price_reject'].map((key) => ({
    key,
  }));
  // accept-offer answers about one offer: an object. A post is an array, one record per lead, however many leads the file held.
  if (single && (ctx.output.format === 'json' || ctx.output.format === 'ndjson'))
    await ctx.output.record(records[0]!, columns, { json: records[0] });
  else await ctx.output.list(records, columns, { jsonRow: (r) => r });
}

const post = defineCommand(
  (legacy) =>
    legacy
      .command('post')
      .description('post leads from a JSON file (one lead, an array, or NDJSON; - for stdin), validated locally first')
      .argument('<file>', 'JSON or NDJSON file of leads, or - for stdin')
      .option(
        '--api-key-file <file>',
        'read the campaign api key from FILE (first line); else LEADCTL_API_KEY_FILE, LEADCTL_API_KEY, api_key in the leads',
      )
      .option('--api-key-stdin', 'read the campaign api key from stdin (first line; not with leads from -)')
      .option('--api-key <key>', 'campaign api key (visible in ps and shell history: prefer the ways above)')
      .option('--stamp', "fill a missing time_stamp with the current time in the contract's Central time format")
      .option(
        '--stamp-zone <zone>',
        "zone of --stamp: the contract's fixed UTC-06:00, or an IANA name such as America/Chicago",
        'UTC-6',
      )
      .option('--validate-only', 'check every lead locally and send nothing')
      .addHelpText(
        'after',
        [
          '',
          'Not retried automatically once sent: the lead post is not idempotent, so a post that fails',
          'in flight may or may not have been received; check before posting it again. (A connection',
          'that fails before anything is sent is retried.) With several leads they are posted one by one',
          'and a failure stops the run, naming the leads that were not sent.',
          '',
          'A source_url over 255 characters has its query dropped (with a warning), as the contract says.',
          'Nothing is sent when any lead fails local validation.',
          '',
          'Exit codes: 0 accepted; 4 rejected or refused (status ERROR); 6 pending with price-reject offers;',
          '2 invalid input; 5 service unreachable. With several leads: 4 if any was rejected or refused,',
          'else 6 if any is pending, else 0.',
          '',
          KEY_HELP,
        ].join('\n'),
      ),
  async (ctx, [file], opts) => {
    const [{ readLegacyInput }, { checkStampZone }, job, { legacyResultRecord }] = await Promise.all([
      import('../ingest/legacy/input.js'),
      import('../ingest/legacy/prepare.js'),
      import('../jobs/legacy-post.js'),
      import('./views/legacy-result.js'),
    ]);
    const stampZone = checkStampZone(opts.stampZone);
    // The key first: --api-key-stdin reads stdin, which must not be the leads.
    const apiKey = await readApiKey(ctx, opts, file === '-');
    const fromEnv =
      apiKey !== undefined &&
      apiKey === (ctx.io.env.LEADCTL_API_KEY || undefined) &&
      opts.apiKey === undefined &&
      opts.apiKeyFile === undefined &&
      !opts.apiKeyStdin &&
      !ctx.io.env.LEADCTL_API_KEY_FILE;
    const input = await readLegacyInput(file, ctx.io);
    const checked = job.checkLegacyLeads(input, {
      apiKeyFlag: fromEnv ? undefined : apiKey,
      apiKeyEnv: fromEnv ? apiKey : undefined,
      stamp: opts.stamp === true,
      stampZone,
      now: ctx.io.now(),
    });
    const several = input.shape !== 'object';
    const where = (lead: { number: number; line?: number }) =>
      input.shape === 'object'
        ? input.source
        : input.shape === 'ndjson'
          ? `${input.source}, line ${lead.line}`
          : `${input.source}, lead ${lead.number}`;
    for (const lead of checked.leads) for (const note of lead.notes) ctx.log.warn(`Warning: ${where(lead)}: ${note}`);

    if (checked.problems.length) {
      const lines = checked.problems.map((p) => job.formatLeadProblem(p, input));
      for (const line of lines.slice(0, 50)) ctx.io.stderr.write(line + '\n');
      if (lines.length > 50) ctx.io.stderr.write(`… and ${lines.length - 50} more\n`);
      const bad = new Set(checked.problems.map((p) => p.lead)).size;
      throw new InputError(
        `${checked.problems.length} problem${checked.problems.length === 1 ? '' : 's'} in ${bad} of ${checked.leads.length} lead${checked.leads.length === 1 ? '' : 's'}; nothing was sent`,
        { file: input.source },
        {
          hint: checked.problems.some((p) => p.path === 'api_key')
            ? 'give the campaign key in LEADCTL_API_KEY, with --api-key-file FILE or --api-key-stdin, or put api_key in the file'
            : 'fix the fields named above and run again (--validate-only checks without sending)',
          details: { problems: checked.problems },
        },
      );
    }
    if (opts.validateOnly) {
      await ctx.output.document(
        { valid: true, leads: checked.leads.length, sent: 0 },
        () =>
          `${checked.leads.length} lead${checked.leads.length === 1 ? '' : 's'} valid; nothing was sent (--validate-only).`,
      );
      return ExitCode.OK;
    }

    const api = await ctx.api();
    const records: import('./views/legacy-result.js').LegacyResultRecord[] = [];
    const outcomes: import('../jobs/legacy-post.js').LegacyOutcome[] = [];
    for (const [i, lead] of checked.leads.entries()) {
      let response: LegacyResponse;
      try {
        response = await api.legacyPost(lead.data);
      } catch (err) {
        // Never repeated automatically: say exactly which leads went and which did not.
        const notSent = checked.leads.slice(i + 1).map((l) => l.number);
        // JSON gets one document: the error, which carries what was posted.
        if (ctx.output.format !== 'json') await showRecords(ctx, records, false);
        if (err instanceof LeadctlError) {
          const message = `${where(lead)}: ${err.message}${notSent.length ? `; ${notSent.length} later lead${notSent.length === 1 ? ' was' : 's were'} not sent` : ''}`;
          throw new LeadctlError(err.code, err.exitCode, message, {
            hint: err.hint ?? 'the lead may or may not have been received: check before posting it again',
            details: { error: err.details, lead: lead.number, posted: records, not_sent: notSent },
            cause: err,
          });
        }
        throw err;
      }
      const receivedAt = ctx.io.now();
      const record = legacyResultRecord(response, receivedAt, lead.number);
      records.push(record);
      outcomes.push(record.outcome);
      await showResult(
        ctx,
        response,
        receivedAt,
        several ? `Lead ${lead.number}${lead.line ? ` (line ${lead.line})` : ''}` : undefined,
      );
    }
    await showRecords(ctx, records, false);
    return job.legacyExitCode(outcomes);
  },
);

const acceptOffer = defineCommand(
  (legacy) =>
    legacy
      .command('accept-offer')
      .description('accept one price-reject offer of a pending lead')
      .option(
        '--api-key-file <file>',
        "read the price-reject campaign's api key from FILE (first line); else LEADCTL_API_KEY_FILE, LEADCTL_API_KEY",
      )
      .option('--api-key-stdin', 'read the api key from stdin (first line)')
      .option('--api-key <key>', 'the api key (visible in ps and shell history: prefer the ways above)')
      .requiredOption('--offer-id <id>', 'the offer to accept')
      .addHelpText(
        'after',
        [
          '',
          'Not retried automatically once sent. Exit codes: 0 accepted; 4 rejected or refused, e.g.',
          '  Expired price reject offer.   post the lead again to get new offers',
          '  Revoked price reject offer.   another offer of the lead was accepted',
          '  Accepted price reject offer.  already accepted',
          '  Invalid price reject offer.   no such offer for this api key',
          '  Price reject not enabled for this campaign.',
          '',
          KEY_HELP,
        ].join('\n'),
      ),
  async (ctx, _args, opts) => {
    const [{ PriceRejectAcceptSchema, formatZodIssues }, job, { legacyResultRecord }] = await Promise.all([
      import('../schema/index.js'),
      import('../jobs/legacy-post.js'),
      import('./views/legacy-result.js'),
    ]);
    const apiKey = await readApiKey(ctx, opts, false);
    if (apiKey === undefined) {
      throw new UsageError(
        "legacy accept-offer needs the price-reject campaign's api key: LEADCTL_API_KEY, --api-key-file FILE or --api-key-stdin",
        { hint: "the key is the campaign's own (`leadctl legacy post` shows its last four with the offers)" },
      );
    }
    const offerId = /^\d+$/.test(opts.offerId.trim()) ? Number(opts.offerId) : Number.NaN;
    const body = { api_key: apiKey, price_reject_offer_id: offerId };
    const parsed = PriceRejectAcceptSchema.safeParse(body);
    if (!parsed.success || Number.isNaN(offerId)) {
      const problems = parsed.success
        ? []
        : formatZodIssues(parsed.error).map(
            (i) =>
              `${i.path === 'price_reject_offer_id' ? '--offer-id' : i.path === 'api_key' ? '--api-key' : i.path}: ${i.message}`,
          );
      throw new UsageError(
        problems.join('; ') || `--offer-id must be a whole number (an offer id), got "${opts.offerId}"`,
        { hint: 'the offer ids are in the answer of `leadctl legacy post` for a pending lead, e.g. --offer-id 1' },
      );
    }
    const api = await ctx.api();
    const response = await api.priceRejectAccept(parsed.data);
    const receivedAt = ctx.io.now();
    await showResult(ctx, response, receivedAt);
    await showRecords(ctx, [legacyResultRecord(response, receivedAt)], true);
    return job.legacyExitCode([job.outcomeOf(response)]);
  },
);

export const register = defineGroup(
  'legacy',
  'the legacy lead post (campaign api key, no login needed) and price-reject offers',
  [post, acceptOffer],
);
