/**
 * Questions on a terminal (auth login): the question on stderr, the answer from stdin,
 * typed characters hidden for secrets.
 */
import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';
import type { IO } from '../io/io.js';
import { InterruptedError, UsageError } from '../errors.js';

export async function ask(io: IO, question: string, options: { hidden?: boolean } = {}): Promise<string> {
  let muted = false;
  // readline echoes what is typed through its output; for a secret that echo is swallowed.
  const echo = new Writable({
    write(chunk, _encoding, callback) {
      if (!muted) io.stderr.write(chunk);
      callback();
    },
  });
  const rl = createInterface({ input: io.stdin, output: echo, terminal: io.stdin.isTTY === true });
  try {
    // On a terminal readline redraws its prompt line (cursor to column 0, clear) before reading: a
    // question written beside it would be wiped until the first key. So a visible question is
    // readline's own prompt; a hidden one is written first, and the redraw goes to the muted echo.
    const hidden = options.hidden === true;
    if (hidden) io.stderr.write(question);
    muted = hidden;
    return await new Promise<string>((resolve, reject) => {
      rl.once('SIGINT', () => reject(new InterruptedError('SIGINT')));
      rl.once('close', () => resolve(''));
      rl.question(hidden ? '' : question, (answer) => resolve(answer));
    });
  } finally {
    if (muted) io.stderr.write('\n');
    muted = false;
    rl.close();
  }
}

/**
 * A destructive action asks first: on a terminal, `QUESTION [y/N]`; with `--yes`, not at all;
 * without a terminal to ask on (cron, pipes) and without `--yes`, it is refused before anything
 * changes, so a script never destroys by default.
 */
export async function confirm(io: IO, question: string, options: { yes: boolean }): Promise<void> {
  if (options.yes) return;
  if (io.stdin.isTTY !== true) {
    throw new UsageError(
      `${question.replace(/\?$/, '')}: this needs confirmation, and there is no terminal to ask on`,
      { hint: 'add --yes to confirm it from a script' },
    );
  }
  const answer = (await ask(io, `${question} [y/N] `)).trim().toLowerCase();
  if (answer !== 'y' && answer !== 'yes') throw new UsageError('not confirmed: nothing was changed');
}
