import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createProgress, progressMode } from '../../../src/output/progress.js';

function stderr(tty: boolean) {
  const s = new PassThrough();
  let text = '';
  s.on('data', (d: Buffer) => (text += d.toString('utf8')));
  Object.assign(s, { isTTY: tty });
  return { s, text: () => text };
}

describe('progressMode', () => {
  it('shows progress on a terminal stderr whatever stdout carries; spins only where a spinner can work', () => {
    expect(progressMode({ stderrIsTTY: true, quiet: false, columns: 80 })).toBe('spinner');
    expect(progressMode({ stderrIsTTY: true, quiet: true, columns: 80 })).toBe('silent');
    // cron: stderr a log file, plain lines even when stdout carries JSON
    expect(progressMode({ stderrIsTTY: false, quiet: false, columns: 80 })).toBe('lines');
    // a detached tmux pane or `script` without a size: no spinner that could redraw forever
    expect(progressMode({ stderrIsTTY: true, quiet: false, columns: 0 })).toBe('lines');
    expect(progressMode({ stderrIsTTY: true, quiet: false, columns: 19 })).toBe('lines');
    expect(progressMode({ stderrIsTTY: true, quiet: false })).toBe('lines');
    expect(progressMode({ stderrIsTTY: true, quiet: false, columns: 120, ci: true })).toBe('lines');
  });
});

describe('line progress (logs)', () => {
  it('prints status lines no more often than the interval, and the last status at the end', async () => {
    let now = 0;
    const e = stderr(false);
    const p = createProgress(e.s, { mode: 'lines', color: false, lineIntervalMs: 1000, now: () => now });
    p.start('sending');
    now = 100;
    p.update('10 sent');
    now = 1200;
    p.update('20 sent');
    now = 1300;
    p.update('25 sent');
    p.note('warning: row 3 skipped');
    p.succeed();
    await p.flush();
    expect(e.text()).toBe('sending\n20 sent\nwarning: row 3 skipped\n25 sent\n');
  });
});

describe('silent progress', () => {
  it('writes nothing', async () => {
    const e = stderr(true);
    const p = createProgress(e.s, { mode: 'silent', color: false });
    p.start('x');
    p.update('y');
    p.note('z');
    p.succeed('done');
    await p.flush();
    expect(e.text()).toBe('');
  });
});

describe('spinner progress', () => {
  it('draws with ora on the given stream and ends with the final text', async () => {
    const e = stderr(true);
    const moves: string[] = [];
    Object.assign(e.s, {
      columns: 80,
      cursorTo: (x: number) => moves.push(`cursorTo ${x}`),
      clearLine: () => moves.push('clearLine'),
      moveCursor: () => moves.push('moveCursor'),
    });
    const p = createProgress(e.s, { mode: 'spinner', color: false });
    p.start('working');
    p.update('half way');
    p.succeed('all done');
    await p.flush();
    expect(e.text()).toContain('all done');
    expect(moves.length).toBeGreaterThan(0);
  });

  it('falls back to plain lines on a stream that cannot move the cursor', async () => {
    const e = stderr(true);
    const p = createProgress(e.s, { mode: 'spinner', color: false });
    p.start('working');
    p.succeed('all done');
    await p.flush();
    expect(e.text()).toBe('working\nall done\n');
  });
});
