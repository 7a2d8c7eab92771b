import type { IO } from './io.js';

export const OUTPUT_FORMATS = ['table', 'json', 'ndjson', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

/** Global flags as the user gave them, resolved against the terminal and environment. */
export interface GlobalOptions {
  output: OutputFormat;
  /** true when the user chose the format explicitly (not defaulted from the TTY). */
  outputExplicit: boolean;
  verbose: boolean;
  quiet: boolean;
  color: boolean;
  profile?: string;
  baseUrl?: string;
  /** Per-request timeout in milliseconds. */
  timeoutMs?: number;
}

export interface Logger {
  /** Progress and notes for a person; silenced by --quiet. */
  info(message: string): void;
  /** Always shown (stderr). */
  warn(message: string): void;
  /** Only with --verbose. */
  debug(message: string): void;
}

/** What every command handler receives instead of importing globals. */
export interface CommandContext {
  io: IO;
  globals: GlobalOptions;
  log: Logger;
}

export function resolveGlobals(io: IO, raw: Record<string, unknown>): GlobalOptions {
  const explicit = typeof raw.output === 'string';
  const output = (explicit ? raw.output : io.stdout.isTTY ? 'table' : 'json') as OutputFormat;
  const noColorEnv = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== '';
  const timeout = raw.timeout === undefined ? undefined : Number(raw.timeout);
  return {
    output,
    outputExplicit: explicit,
    verbose: raw.verbose === true,
    quiet: raw.quiet === true,
    color: raw.color !== false && !noColorEnv && io.stderr.isTTY === true,
    profile: (raw.profile as string | undefined) ?? undefined,
    baseUrl: (raw.baseUrl as string | undefined) ?? undefined,
    timeoutMs: timeout === undefined ? undefined : Math.round(timeout * 1000),
  };
}

export function createLogger(io: IO, globals: Pick<GlobalOptions, 'quiet' | 'verbose'>): Logger {
  const write = (line: string) => io.stderr.write(line.endsWith('\n') ? line : line + '\n');
  return {
    info: (m) => {
      if (!globals.quiet) write(m);
    },
    warn: (m) => write(m),
    debug: (m) => {
      if (globals.verbose) write(m);
    },
  };
}

export function createContext(io: IO, raw: Record<string, unknown>): CommandContext {
  const globals = resolveGlobals(io, raw);
  return { io, globals, log: createLogger(io, globals) };
}
