import { readFile, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { IO } from '../io/io.js';
import { UsageError } from '../errors.js';
import { readAll } from '../io/read-all.js';

/**
 * A secret (client secret, campaign api key) read from standard input or a file: its first
 * non-blank line, trimmed. Both refuse an empty source; a file others can read draws a warning.
 */

function firstLine(text: string): string {
  return (text.split(/\r?\n/).find((line) => line.trim() !== '') ?? '').trim();
}

export async function secretFromStdin(io: Pick<IO, 'stdin'>, flag: string, hint?: string): Promise<string> {
  const secret = firstLine(await readAll(io.stdin));
  if (!secret) throw new UsageError(`${flag} was given but stdin was empty`, hint ? { hint } : undefined);
  return secret;
}

/** `what` names the secret in messages ("client secret", "api key"). */
export async function secretFromFile(
  io: Pick<IO, 'cwd'>,
  file: string,
  what: string,
  warn: (line: string) => void,
): Promise<string> {
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new UsageError(
      `cannot read the ${what} file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const secret = firstLine(text);
  if (!secret) throw new UsageError(`the ${what} file ${path} is empty`);
  if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) {
    warn(`Warning: ${path} can be read by other users; consider \`chmod 600 ${file}\``);
  }
  return secret;
}
