import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { IO } from '../io/io.js';
import { UsageError } from '../errors.js';
import { readSmallFile } from '../io/open-file.js';
import { readAll } from '../io/read-all.js';

/**
 * A secret (client secret, campaign api key) read from standard input or a file: its first
 * non-blank line, trimmed. Both refuse an empty source, and one larger than MAX_SECRET_BYTES (a
 * file named by mistake must never be read whole, let alone sent as the secret); a file others
 * can read draws a warning.
 */

/** Secrets are a line of at most a few hundred characters. */
const MAX_SECRET_BYTES = 64 * 1024;
const LIMIT_HINT = 'the file (or standard input) must hold the secret alone, on one line';

function firstLine(text: string): string {
  return (text.split(/\r?\n/).find((line) => line.trim() !== '') ?? '').trim();
}

export async function secretFromStdin(io: Pick<IO, 'stdin'>, flag: string, hint?: string): Promise<string> {
  const text = await readAll(io.stdin, {
    maxBytes: MAX_SECRET_BYTES,
    tooLarge: () =>
      new UsageError(`${flag}: standard input holds more than 64 KiB; a secret is at most that`, { hint: LIMIT_HINT }),
  });
  const secret = firstLine(text);
  if (!secret) throw new UsageError(`${flag} was given but stdin was empty`, hint ? { hint } : undefined);
  return secret;
}

/**
 * `secret.txt`, `./key`, `/etc/leadctl/secret`: a name with a dot or a slash, only path
 * characters, in a folder that exists (a base64 secret holds slashes too, seldom a real folder).
 */
function looksLikePath(file: string, full: string): boolean {
  return /^[\w./~ -]+$/.test(file) && /[./]/.test(file) && existsSync(dirname(full));
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
    const bytes = await readSmallFile(
      path,
      MAX_SECRET_BYTES,
      (size) =>
        new UsageError(
          `the ${what} file ${path} ${size === undefined ? 'holds more than 64 KiB' : `is ${size.toLocaleString('en-US')} bytes`}; a secret file holds at most 64 KiB`,
          { hint: LIMIT_HINT },
        ),
    );
    text = bytes.toString('utf8');
  } catch (error) {
    if (error instanceof UsageError) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    // A missing "file" that does not look like a path is often the secret itself, typed where its
    // file's name goes: not repeated on a terminal, in a log, or in a cron mail.
    if (code === 'ENOENT' && !looksLikePath(file, path))
      throw new UsageError(
        `the ${what} file given does not exist (its name is not repeated here: it may be the ${what} itself)`,
        {
          hint: `give the path of a file holding the ${what}, or the ${what} itself on standard input`,
        },
      );
    throw new UsageError(`cannot read the ${what} file ${path}: ${code ?? (error as Error).message}`);
  }
  const secret = firstLine(text);
  if (!secret) throw new UsageError(`the ${what} file ${path} is empty`);
  if (process.platform !== 'win32' && ((await stat(path)).mode & 0o077) !== 0) {
    warn(`Warning: ${path} can be read by other users; consider \`chmod 600 ${file}\``);
  }
  return secret;
}
