import { readFileSync } from 'node:fs';
import { Command, CommanderError, Option } from 'commander';
import { ExitCode, LeadctlError, UsageError } from '../errors.js';
import type { Bind, Register } from './command.js';
import { createContext, OUTPUT_FORMATS } from './context.js';
import type { IO } from './io.js';
import { INPUT_ENCODINGS, processIO, type InputEncoding } from './io.js';
import { commandGroups } from './groups.js';

export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(io: IO, bind: Bind, groups: Register[] = commandGroups): Command {
  const program = new Command('leadctl');
  program
    .description('Operate the Lead Intake and Loan Performance Service: suppression lists, loan performance pushes, leads, dry runs, and a local sandbox.')
    .version(packageVersion(), '-V, --version', 'print the version')
    .addOption(new Option('-o, --output <format>', 'output format (default: table on a terminal, json otherwise)').choices(OUTPUT_FORMATS))
    .option('-v, --verbose', 'log each request and decision to stderr (secrets redacted)')
    .option('-q, --quiet', 'print only data and errors')
    .option('--no-color', 'disable colours (NO_COLOR is honoured too)')
    .option('-p, --profile <name>', 'credentials profile to use (env LEADCTL_PROFILE)')
    .option('--base-url <url>', 'service base URL (env LEADCTL_BASE_URL)')
    .option('--timeout <seconds>', 'per-request timeout in seconds', parsePositiveNumber)
    .option('--lists-path <path>', 'where this deployment serves lists, e.g. /api/v1/list-manager/lists (default: the documented path, else the other one, remembered per profile)', parseListsPath)
    .addOption(new Option('--encoding <name>', 'text encoding of input files (default: UTF-8; UTF-16 with a BOM is recognised)').choices(INPUT_ENCODINGS))
    .option('--delimiter <char>', 'field delimiter of input files: a character, or comma, semicolon, tab, pipe (default: detected from the header line; for exports, the mapping\'s)', parseDelimiter)
    .option('--csv-raw', 'write CSV values exactly, without the leading \' that keeps spreadsheets from running cells starting with = + - @ as formulas')
    .option('--allow-changing-input', 'read an input file even if it changes while it is read (refused by default: an export still being written)')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
    });
  for (const register of groups) register(program, bind);
  // Subcommands inherit output routing and error behaviour.
  const configure = (cmd: Command) => {
    for (const sub of cmd.commands) {
      sub.exitOverride().configureOutput({ writeOut: (s) => io.stdout.write(s), writeErr: (s) => io.stderr.write(s) });
      sub.showHelpAfterError('(run with --help for usage)');
      configure(sub);
    }
  };
  configure(program);
  return program;
}

function parseListsPath(value: string): string {
  const path = value.trim().replace(/\/+$/, '');
  if (!/^\/[\w.~\-/]+$/.test(path) || path.includes('//')) throw new UsageError(`--lists-path must be a path on the service starting with /, like /api/v1/list-manager/lists; got "${value}"`);
  return path;
}

const DELIMITER_NAMES: Record<string, string> = { comma: ',', semicolon: ';', tab: '\t', pipe: '|', '\\t': '\t' };

function parseDelimiter(value: string): string {
  const d = DELIMITER_NAMES[value.toLowerCase()] ?? value;
  if (d.length !== 1 || d === '"' || d === '\r' || d === '\n') throw new UsageError(`--delimiter must be one character (or comma, semicolon, tab, pipe), not a quote or a line break; got "${value}"`);
  return d;
}

function parsePositiveNumber(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0) throw new UsageError(`--timeout must be a positive number of seconds, got "${value}"`);
  return n;
}

/** Parses argv, runs the command and returns the exit code. Never exits the process. */
export async function main(argv: string[], io: IO = processIO()): Promise<number> {
  let exitCode: number = ExitCode.OK;
  let jsonErrors = wantsJson(argv);
  const bind: Bind = (handler) => async (...commanderArgs: any[]) => {
    const cmd = commanderArgs[commanderArgs.length - 1] as Command;
    const raw = cmd.optsWithGlobals();
    const input = { encoding: raw.encoding as InputEncoding | undefined, allowChanging: raw.allowChangingInput === true, delimiter: raw.delimiter as string | undefined };
    const ctx = createContext({ ...io, input, csv: { raw: raw.csvRaw === true } }, raw);
    jsonErrors = ctx.globals.output === 'json';
    try {
      const code = await handler(ctx, cmd.processedArgs ?? [], cmd.opts() as never, cmd);
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
    return renderError(err, io, jsonErrors);
  }
}

function wantsJson(argv: string[]): boolean {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if ((a === '-o' || a === '--output') && argv[i + 1] === 'json') return true;
    if (a === '--output=json' || a === '-ojson') return true;
  }
  return false;
}

function renderError(err: unknown, io: IO, json: boolean): number {
  if (err instanceof CommanderError) {
    // Help and version are not failures; commander already printed them.
    if (err.exitCode === 0) return ExitCode.OK;
    if (json) io.stdout.write(JSON.stringify({ error: { code: 'usage', message: err.message.replace(/^error: /, ''), exit_code: ExitCode.USAGE } }) + '\n');
    return ExitCode.USAGE;
  }
  if (err instanceof LeadctlError) {
    if (json) io.stdout.write(JSON.stringify({ error: err.toJSON() }) + '\n');
    io.stderr.write(`Error: ${err.message}\n`);
    if (err.hint) io.stderr.write(`Hint: ${err.hint}\n`);
    return err.exitCode;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (json) io.stdout.write(JSON.stringify({ error: { code: 'unexpected', message, exit_code: ExitCode.UNEXPECTED } }) + '\n');
  io.stderr.write(`Error: unexpected failure: ${message}\n`);
  if (err instanceof Error && err.stack && io.env.LEADCTL_DEBUG) io.stderr.write(err.stack + '\n');
  io.stderr.write('Hint: this is a bug in leadctl; rerun with LEADCTL_DEBUG=1 and report the stack trace.\n');
  return ExitCode.UNEXPECTED;
}
