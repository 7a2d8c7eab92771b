import { PassThrough, Readable } from 'node:stream';
import { EventEmitter } from 'node:events';
import type { IO, Signal } from '../../src/io/io.js';

export interface MemoryIO extends IO {
  stdoutText(): string;
  stderrText(): string;
  /** Deliver a signal to whatever handler a command registered. */
  sendSignal(signal: Signal): void;
}

/** An IO for in-process command tests: captured output, given stdin and environment. */
export function memoryIO(
  options: {
    stdin?: string;
    env?: Record<string, string | undefined>;
    tty?: boolean;
    cwd?: string;
    now?: () => Date;
  } = {},
): MemoryIO {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  stdout.on('data', (c: Buffer) => out.push(Buffer.from(c)));
  stderr.on('data', (c: Buffer) => err.push(Buffer.from(c)));
  const tty = options.tty ?? false;
  Object.assign(stdout, { isTTY: tty, columns: 120 });
  Object.assign(stderr, { isTTY: tty, columns: 120 });
  const signals = new EventEmitter();
  return {
    stdin: Object.assign(Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]), {
      isTTY: false,
    }),
    stdout,
    stderr,
    env: options.env ?? {},
    cwd: options.cwd ?? process.cwd(),
    now: options.now ?? (() => new Date()),
    onSignal(handler) {
      signals.on('signal', handler);
      return () => signals.off('signal', handler);
    },
    sendSignal: (s) => signals.emit('signal', s),
    stdoutText: () => Buffer.concat(out).toString('utf8'),
    stderrText: () => Buffer.concat(err).toString('utf8'),
  };
}
