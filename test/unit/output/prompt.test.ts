import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readAll } from '../../../src/io/read-all.js';
import { ask } from '../../../src/output/prompt.js';
import { memoryIO } from '../../helpers/memory-io.js';

describe('ask', () => {
  it('writes the question to stderr and returns the line typed', async () => {
    const io = memoryIO();
    const stdin = new PassThrough();
    io.stdin = Object.assign(stdin, { isTTY: false });
    const answer = ask(io, 'Client id: ');
    stdin.write('abc-123\n');
    expect(await answer).toBe('abc-123');
    expect(io.stderrText()).toBe('Client id: ');
    expect(io.stdoutText()).toBe('');
  });

  it('on a terminal, a visible question stays on the screen while the answer is typed', async () => {
    const io = memoryIO();
    const stdin = new PassThrough();
    io.stdin = Object.assign(stdin, { isTTY: true, setRawMode: () => stdin });
    const answer = ask(io, 'Client id: ');
    await new Promise((r) => setImmediate(r));
    stdin.write('abc\r');
    expect(await answer).toBe('abc');
    const screen = io.stderrText();
    // What a terminal shows after readline's last "go to column 0 and clear": the question, then the typing.
    const lastClear = screen.lastIndexOf('\u001b[0J');
    expect(screen.slice(Math.max(0, lastClear))).toMatch(
      /^(?:\u001b\[\d*[A-Za-z])*Client id: (?:\u001b\[\d*[A-Za-z])*abc\r?\n$/,
    );
  });

  it('does not echo a hidden answer typed on a terminal', async () => {
    const io = memoryIO();
    const stdin = new PassThrough();
    io.stdin = Object.assign(stdin, { isTTY: true, setRawMode: () => stdin });
    const answer = ask(io, 'Client secret (input hidden): ', { hidden: true });
    stdin.write('s3cr3t\r');
    expect(await answer).toBe('s3cr3t');
    expect(io.stderrText()).toContain('Client secret (input hidden): ');
    expect(io.stderrText()).not.toContain('s3cr3t');
  });

  it('returns an empty answer when input ends', async () => {
    const io = memoryIO();
    const stdin = new PassThrough();
    io.stdin = Object.assign(stdin, { isTTY: false });
    const answer = ask(io, 'Q: ');
    stdin.end();
    expect(await answer).toBe('');
  });
});

describe('readAll', () => {
  it('reads a stream to the end', async () => {
    const s = new PassThrough();
    s.end('line one\nline two\n');
    expect(await readAll(s)).toBe('line one\nline two\n');
  });
});
