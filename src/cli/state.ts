import { defineCommand, defineGroup } from './command.js';
import type { CommandContext } from './context.js';

/**
 * `state`: the local record of what the service acknowledged (for `customers batch
 * --changed-only` and `lists diff`), per profile, base URL and client id.
 */

async function profileName(ctx: CommandContext): Promise<string> {
  const { resolveProfileName } = await import('../config/credentials.js');
  return resolveProfileName({ profile: ctx.globals.profile }, ctx.io.env, (await ctx.config.store()).read()).value;
}

const show = defineCommand(
  (state) =>
    state
      .command('show')
      .description('what the record of the active profile holds: customers remembered, lists uploaded'),
  async (ctx) => {
    const [{ DeltaRecord }, { stateDir }] = await Promise.all([
      import('../jobs/delta/record.js'),
      import('../config/state-dir.js'),
    ]);
    const resolved = await ctx.config.credentials();
    const target = {
      profile: resolved.profile.value,
      baseUrl: resolved.baseUrl.value,
      clientId: resolved.clientId?.value,
    };
    const record = DeltaRecord.open(stateDir(ctx.io.env), ctx.config.dir, target, false, (line) => ctx.log.warn(line));
    try {
      const held = record?.describe();
      const doc = {
        profile: target.profile,
        base_url: target.baseUrl,
        record: record?.path ?? null,
        customers: held?.customers ?? 0,
        last_sent: held?.last_sent ?? null,
        lists: held?.lists ?? [],
      };
      await ctx.output.document(doc, () => {
        if (!record)
          return `No record for profile "${target.profile}" at ${target.baseUrl}: the next \`customers batch --changed-only\` sends everything.\n`;
        const lines = [
          `Record of what ${target.baseUrl} acknowledged (profile "${target.profile}"): ${record.path}`,
          `customers  ${doc.customers.toLocaleString('en-US')}${doc.last_sent ? ` (last sent ${doc.last_sent})` : ''}`,
          ...doc.lists.map(
            (l) => `list ${l.list_id}  ${l.values.toLocaleString('en-US')} ${l.type} (uploaded ${l.uploaded_at})`,
          ),
        ];
        return lines.join('\n') + '\n';
      });
    } finally {
      record?.close();
    }
  },
);

const forget = defineCommand(
  (state) =>
    state
      .command('forget')
      .description(
        "delete the profile's record and its key (with --profile): the next --changed-only push sends everything",
      )
      .option('-y, --yes', 'do not ask (needed when there is no terminal to ask on)'),
  async (ctx, _args, opts) => {
    const [{ forgetProfile }, { stateDir }, { confirm }] = await Promise.all([
      import('../jobs/delta/record.js'),
      import('../config/state-dir.js'),
      import('../output/prompt.js'),
    ]);
    const name = await profileName(ctx);
    await confirm(
      ctx.io,
      `Forget what profile "${name}" sent (the next --changed-only push sends everything, and lists diff knows no list)?`,
      { yes: opts.yes === true },
    );
    const gone = forgetProfile(stateDir(ctx.io.env), ctx.config.dir, name);
    await ctx.output.document({ profile: name, records_removed: gone.records, key_removed: gone.key !== null }, () =>
      gone.records.length || gone.key
        ? `Forgot profile "${name}": ${gone.records.length} record file${gone.records.length === 1 ? '' : 's'} and its key removed.\n`
        : `Profile "${name}" has no record; nothing to forget.\n`,
    );
  },
);

export const register = defineGroup(
  'state',
  'the local record of what the service acknowledged (for customers batch --changed-only and lists diff); holds no personal data',
  [show, forget],
);
