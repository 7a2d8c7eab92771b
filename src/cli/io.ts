import type { Readable, Writable } from 'node:stream';

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
}

export function processIO(): IO {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    now: () => new Date(),
    onSignal(handler) {
      const onInt = () => handler('SIGINT');
      const onTerm = () => handler('SIGTERM');
      process.on('SIGINT', onInt);
      process.on('SIGTERM', onTerm);
      return () => {
        process.off('SIGINT', onInt);
        process.off('SIGTERM', onTerm);
      };
    },
  };
}
