import { defineCommand } from './command.js';

/** Each step's bound when --timeout is not given: a diagnosis should not wait a minute per question. */
const DEFAULT_STEP_TIMEOUT_MS = 5000;

const doctor = defineCommand(
  (parent) =>
    parent
      .command('doctor')
      .description(
        'check the setup a job needs: runtime, folders, records, cron PATH, credentials, proxy, DNS, TLS, clock, token, lists path',
      )
      .option('--offline', 'only the checks on this machine: no DNS, no connection, no request')
      .option(
        '--cron-path <dirs>',
        "the PATH to look for node and leadctl in, as a crontab would give it (default: cron's own, /usr/bin:/bin)",
      )
      .addHelpText(
        'after',
        '\nEach check prints ✓ (ok), ! (warning), ✗ (failed) or – (skipped), what it measured and, when it is not\n' +
          'ok, a hint. It never prints a secret or a token and changes nothing: no file or folder is made, no token\n' +
          'cached. Exit codes: 0 nothing failed (warnings pass); otherwise the largest of the failures: 2 local setup\n' +
          '(folders, runtime, config, clock), 3 credentials, 5 network or service. Each network step waits\n' +
          'at most 5 s (--timeout SECONDS to change it). The checks, what they measure and their hints: docs/doctor.md.',
      ),
  async (ctx, _args, opts) => {
    const [{ runDoctor, doctorExitCode }, { CHECK_COLUMNS, DoctorText, wantsUnicode }, { packageVersion }] =
      await Promise.all([import('../jobs/doctor/index.js'), import('../output/doctor.js'), import('../version.js')]);
    const version = packageVersion();
    const run = runDoctor({
      env: ctx.io.env,
      now: () => ctx.io.now(),
      configDir: ctx.config.dir,
      profile: ctx.globals.profile,
      baseUrl: ctx.globals.baseUrl,
      listsPath: ctx.globals.listsPath,
      timeoutMs: ctx.globals.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS,
      offline: opts.offline === true,
      cronPath: opts.cronPath,
      userAgent: `leadctl/${version} node/${process.versions.node}`,
      debug: (line) => ctx.log.debug(line),
      redactor: ctx.redactor,
    });
    const checks = [];
    if (ctx.output.isHuman) {
      // Each line as its check ends: a slow network step shows where it is.
      const text = new DoctorText(ctx.globals.color && ctx.io.stdout.isTTY === true, wantsUnicode(ctx.io.env));
      await ctx.output.write(text.heading(version, run.profile, run.baseUrl, run.production));
      for await (const check of run.checks) {
        checks.push(check);
        await ctx.output.write(text.line(check));
      }
      const code = doctorExitCode(checks);
      await ctx.output.write(text.summary(checks, code));
      return code;
    }
    for await (const check of run.checks) checks.push(check);
    await ctx.output.list(checks, CHECK_COLUMNS);
    return doctorExitCode(checks);
  },
);

export const register = doctor;
