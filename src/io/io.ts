import type { Readable, Writable } from 'node:stream';
import { InterruptedError } from '../errors.js';

export type Signal = 'SIGINT' | 'SIGTERM';

export type InputStream = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
export type OutputStream = Writable & { isTTY?: boolean; columns?: number };

/**
 * Everything a command may touch of the outside world. The binary passes the real
 * process's; tests pass their own, so commands run in-process exactly as from a shell.
 */
export interface IO {
  stdin: InputStream;
  stdout: OutputStream;
  stderr: OutputStream;
  env: Record<string, string | undefined>;
  cwd: string;
  now(): Date;
  /**
   * Take over SIGINT/SIGTERM while a long run finishes its in-flight work.
   * Returns a function that gives the signals back. Without a handler, a signal
   * ends the process the usual way.
   */
  onSignal(handler: (signal: Signal) => void): () => void;
  /** How input files are read (global --encoding, --allow-changing-input). */
  input?: InputSettings;
  /** How CSV is written (global --csv-raw: no formula neutralising). */
  csv?: { raw?: boolean };
}

export interface InputSettings {
  /** Text encoding of input files: utf-8 (default; UTF-16 with a BOM is recognised), latin1, windows-1252, utf-16le. */
  encoding?: InputEncoding;
  /** Read a file even when it changes while it is read (an exporter still writing it). */
  allowChanging?: boolean;
  /** The field delimiter of delimited files (--delimiter); detected from the header line when absent. */
  delimiter?: string;
}

/**
 * For a command that stops cleanly on Ctrl-C or SIGTERM: a signal aborted with the
 * InterruptedError it then exits with (130 or 143). `release` gives the signals back.
 */
export function abortOnSignal(io: Pick<IO, 'onSignal'>): { signal: AbortSignal; release: () => void } {
  const controller = new AbortController();
  const release = io.onSignal((signal) => controller.abort(new InterruptedError(signal)));
  return { signal: controller.signal, release };
}

export const INPUT_ENCODINGS = ['utf-8', 'latin1', 'windows-1252', 'utf-16le'] as const;
export type InputEncoding = (typeof INPUT_ENCODINGS)[number];

export function processIO(): IO {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    now: () => new Date(),
    onSignal: trapSignals,
  };
}

const SIGNALS: readonly Signal[] = ['SIGINT', 'SIGTERM'];
/** A second delivery of the same signal this soon after the first is its echo, not a second Ctrl-C. */
const ECHO_WINDOW_MS = 300;

const handlers = new Set<(signal: Signal) => void>();
let last: { signal: Signal; at: number } | undefined;

/**
 * One process listener per signal, shared by every handler (the demo traps signals while a push
 * inside it does too). `when-exit`, which conf loads, re-sends each signal to the process after
 * its own cleanup; without the echo filter that re-sent signal would count as a second Ctrl-C and
 * cut a graceful drain short.
 */
function dispatch(signal: Signal): void {
  const now = Date.now();
  const echo = last !== undefined && last.signal === signal && now - last.at < ECHO_WINDOW_MS;
  last = { signal, at: now };
  if (echo) return;
  for (const handler of [...handlers]) handler(signal);
}
const listeners: Record<Signal, () => void> = { SIGINT: () => dispatch('SIGINT'), SIGTERM: () => dispatch('SIGTERM') };

function trapSignals(handler: (signal: Signal) => void): () => void {
  if (handlers.size === 0) for (const signal of SIGNALS) process.on(signal, listeners[signal]);
  handlers.add(handler);
  return () => {
    if (!handlers.delete(handler) || handlers.size > 0) return;
    for (const signal of SIGNALS) process.off(signal, listeners[signal]);
  };
}
