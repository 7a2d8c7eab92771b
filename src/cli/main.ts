import { Command, CommanderError, type CommandUnknownOpts } from '@commander-js/extra-typings';
import { environmentError, ExitCode, LeadctlError, UsageError } from '../errors.js';
import { Redactor, redactError } from '../redact.js';
import { maskPersonalNumbers } from '../io/mask.js';
import type { Bind, Register } from './command.js';
import { packageVersion } from '../version.js';
import { createContext } from './context.js';
import type { IO } from '../io/io.js';
import { processIO } from '../io/io.js';
import { addGlobalOptions } from './global-options.js';
import { commandGroups } from './groups.js';
import { COMMAND_EXAMPLES, examplesText } from './examples.js';
import { formatHelpCommandsFirst } from './help-order.js';
import { commanderHint, commandPath, helpHint } from './usage-hints.js';

export function buildProgram(io: IO, bind: Bind, groups: Register[] = commandGroups) {
  const program = addGlobalOptions(
    new Command('leadctl')
      .description(
        'Operate the Lead Intake and Loan Performance Service: suppression lists, loan performance pushes, leads, dry runs, and a local sandbox.',
      )
      .version(packageVersion(), '-V, --version', 'print the version'),
  );
  program
    .exitOverride()
    // Global options in every command's help, as they can go before or after the command.
    .configureHelp({ showGlobalOptions: true, formatHelp: formatHelpCommandsFirst })
    .showSuggestionAfterError(true);
  // Commander's own error lines are not printed here: main renders every error in one style.
  const output = (cmd: CommandUnknownOpts) => ({
    writeOut: (s: string) => io.stdout.write(s),
    writeErr: (s: string) => io.stderr.write(s),
    outputError: () => {
      failingCommand.set(program, cmd);
    },
  });
  program.configureOutput(output(program));
  // A group run without its command shows its help as the error: remember which group.
  program.on('beforeAllHelp', (context: { error: boolean; command: CommandUnknownOpts }) => {
    if (context.error) failingCommand.set(program, context.command);
  });
  for (const register of groups) register(program, bind);
  // Subcommands inherit output routing and error behaviour, and get their examples.
  const configure = (cmd: CommandUnknownOpts, path: string[]) => {
    for (const sub of cmd.commands) {
      const subPath = [...path, sub.name()];
      sub
        .exitOverride()
        .configureOutput(output(sub))
        .configureHelp({ showGlobalOptions: true, formatHelp: formatHelpCommandsFirst })
        .showSuggestionAfterError(true);
      const examples = COMMAND_EXAMPLES[subPath.join(' ')];
      if (examples) sub.addHelpText('after', examplesText(examples));
      configure(sub, subPath);
    }
  };
  configure(program, []);
  program.addHelpText(
    'after',
    examplesText([
      'leadctl auth login --base-url https://api.example.com --client-id ID',
      'leadctl lists create ssns.csv --name "Do not lend" --type ssn',
      'leadctl customers batch export.csv --mapping mapping.json > summary.json',
      'leadctl demo',
    ]) + "\n\nRun `leadctl COMMAND --help` for a command's options and examples.",
  );
  return program;
}

/** The command whose usage was wrong (commander reports errors without saying which), per program. */
const failingCommand = new WeakMap<CommandUnknownOpts, CommandUnknownOpts>();

/** Parses argv, runs the command and returns the exit code. Never exits the process. */
export async function main(argv: string[], io: IO = processIO()): Promise<number> {
  let exitCode: number = ExitCode.OK;
  // One per run: what the run's clients send is what its error output must never show.
  const redactor = new Redactor();
  // Until the command runs, the format comes from argv: errors in the flags themselves follow it too.
  const explicit = explicitOutput(argv);
  let jsonErrors: JsonErrors =
    explicit === 'json' ? 'stdout' : explicit === undefined && io.stdout.isTTY !== true ? 'stderr' : 'none';
  const bind: Bind = (handler) =>
    async function (this) {
      // A usage error the handler throws is this command's.
      failingCommand.set(program, this);
      const raw = program.opts();
      const input = {
        encoding: raw.encoding,
        allowChanging: raw.allowChangingInput === true,
        delimiter: raw.delimiter,
      };
      const ctx = createContext({ ...io, input, csv: { raw: raw.csvRaw === true } }, raw, main, redactor);
      // JSON asked for by name: the error is the run's one document on stdout. JSON only implied (stdout
      // piped): stdout is for data, so the error document goes to stderr (see JsonErrors).
      jsonErrors = ctx.globals.output !== 'json' ? 'none' : ctx.globals.outputExplicit ? 'stdout' : 'stderr';
      try {
        const code = await handler(ctx, this.processedArgs, this.opts(), this);
        exitCode = code ?? ExitCode.OK;
      } finally {
        await ctx.dispose();
      }
    };
  const program = buildProgram(io, bind);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return exitCode;
  } catch (err) {
    return renderError(redactError(err, redactor), io, jsonErrors, failingCommand.get(program), redactor);
  }
}

/**
 * Where an error goes as a JSON document: on stdout with `-o json` (or `--output json`), as the
 * run's one document, the `Error:` and `Hint:` lines going to stderr; with stdout piped and no
 * format chosen (JSON implied), on stderr instead of those lines when stderr is not a terminal
 * either (a person at a terminal still reads plain lines), so that a file or a `$(…)` that
 * expected data never gets an error document, and a log never gets the error twice.
 */
type JsonErrors = 'stdout' | 'stderr' | 'none';

/** The --output format named in argv, if any (before commander has parsed it). */
function explicitOutput(argv: string[]): string | undefined {
  let found: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--') break;
    if ((a === '-o' || a === '--output') && argv[i + 1] !== undefined) found = argv[++i];
    else if (a.startsWith('--output=')) found = a.slice('--output='.length);
    else if (a.startsWith('-o') && a.length > 2 && !a.startsWith('--')) found = a.slice(2);
  }
  return found;
}

/**
 * Commander's message without the words of the command line it quotes that may be a secret or
 * personal data given in the wrong place (`auth login --client-secret-stdin S3CR3T`, `dry-run
 * 123-45-6789`): extra arguments are counted, not shown; an unknown `--flag=value` loses its value;
 * an unknown command is named only when it looks like one; numbers left are masked.
 */
export function withoutQuotedInput(code: string, message: string): string {
  let text = message;
  if (code === 'commander.excessArguments')
    text = text.replace(/ but got (\d+): [\s\S]*\.$/, ' but got $1 (not repeated here: one may be a secret)');
  else if (code === 'commander.unknownOption')
    text = text
      .replace(/^(error: unknown option '-[^'=]*)=[\s\S]*?'(\n\(Did you mean .*\))?$/, "$1=…'$2")
      // A secret that begins with a dash is an "unknown option" too: only a flag's shape is named.
      .replace(/^error: unknown option '([^'=]*)(=…)?'/, (whole, flag: string) =>
        /^(--[a-z][a-z0-9-]{0,39}|-[a-z])$/i.test(flag)
          ? whole
          : 'error: an unknown option (not repeated here: it may be a secret)',
      );
  else if (code === 'commander.unknownCommand')
    text = text.replace(/unknown command '([^']*)'/, (whole, name: string) =>
      /^[a-z][a-z0-9-]{0,39}$/i.test(name) ? whole : 'unknown command (not repeated here: it may be a secret)',
    );
  return maskPersonalNumbers(text);
}

/** Commander's message in leadctl's style: no `error:` prefix, one line, "(did you mean …?)". */
export function usageMessage(message: string): string {
  return message
    .replace(/^error: /, '')
    .replace(/\n\(Did you mean (.*)\)$/s, ' (did you mean $1)')
    .replace(/\n+/g, ' ')
    .trim();
}

function renderError(
  thrown: unknown,
  io: IO,
  jsonErrors: JsonErrors,
  failing: CommandUnknownOpts | undefined,
  redactor: Redactor,
): number {
  // Without a terminal, stderr gets each error once: the JSON document where JSON is implied, else text.
  const jsonOnly = jsonErrors === 'stderr' && io.stderr.isTTY !== true;
  const report = (doc: object, text: string[]): void => {
    const line = JSON.stringify(doc) + '\n';
    if (jsonErrors === 'stdout') io.stdout.write(line);
    if (jsonOnly) io.stderr.write(line);
    else for (const t of text) io.stderr.write(t);
  };
  // A full, read-only or forbidden place that no layer named is still the machine's doing, not a bug.
  const err = environmentError(thrown) ?? thrown;
  if (err instanceof CommanderError) {
    // Help and version are not failures; commander already printed them.
    if (err.exitCode === 0) return ExitCode.OK;
    // A group named without its command: commander printed the group's help on stderr.
    const helpShown = err.code === 'commander.help';
    // Commander quotes what it did not understand, which may be a secret given as a flag.
    const message = redactor.text(
      helpShown
        ? `${commandPath(failing ?? undefined)} needs a command`
        : usageMessage(withoutQuotedInput(err.code, err.message)),
    );
    const hint = commanderHint(err, failing);
    report(
      { error: { code: 'usage', message, exit_code: ExitCode.USAGE, hint } },
      helpShown ? [`Hint: ${hint}\n`] : [`Error: ${message}\n`, `Hint: ${hint}\n`],
    );
    return ExitCode.USAGE;
  }
  if (err instanceof LeadctlError) {
    // A usage error always says what to do: its own hint, else the command's help.
    const hint = err.hint ?? (err instanceof UsageError ? helpHint(failing) : undefined);
    report({ error: { ...err.toJSON(), ...(hint ? { hint } : {}) } }, [
      `Error: ${err.message}\n`,
      ...(hint ? [`Hint: ${hint}\n`] : []),
    ]);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  const hint = 'this is a bug in leadctl; rerun with LEADCTL_DEBUG=1 and report the stack trace.';
  const stack = err instanceof Error && err.stack && io.env.LEADCTL_DEBUG ? [err.stack + '\n'] : [];
  // The stack is text for a person whatever the format; the JSON document stays the last line.
  if (jsonOnly) for (const t of stack) io.stderr.write(t);
  report({ error: { code: 'unexpected', message, exit_code: ExitCode.UNEXPECTED } }, [
    `Error: unexpected failure: ${message}\n`,
    ...stack,
    `Hint: ${hint}\n`,
  ]);
  return ExitCode.UNEXPECTED;
}
