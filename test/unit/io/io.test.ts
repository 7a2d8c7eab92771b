import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const IO_MODULE = fileURLToPath(new URL('../../../dist/io/io.js', import.meta.url));

/** Runs a script in a fresh Node process (signals are process-wide) and returns its output. */
function runScript(source: string): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', source], {
      cwd: fileURLToPath(new URL('../../..', import.meta.url)),
    });
    let stdout = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, stdout }));
  });
}

describe('processIO().onSignal', () => {
  it('delivers one Ctrl-C once, even with conf loaded (when-exit re-sends the signal to the process)', async () => {
    const r = await runScript(`
      import { processIO } from ${JSON.stringify(IO_MODULE)};
      await import('conf');
      const seen = [];
      const release = processIO().onSignal((s) => seen.push(s));
      process.kill(process.pid, 'SIGINT');
      await new Promise((r) => setTimeout(r, 800));
      release();
      console.log(JSON.stringify(seen));
    `);
    expect(r.signal).toBeNull();
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual(['SIGINT']);
  });

  it('gives every registered handler the signal, and a later signal is delivered again', async () => {
    const r = await runScript(`
      import { processIO } from ${JSON.stringify(IO_MODULE)};
      const io = processIO();
      const a = [], b = [];
      const ra = io.onSignal((s) => a.push(s));
      const rb = io.onSignal((s) => b.push(s));
      process.kill(process.pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 500));
      process.kill(process.pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 300));
      rb(); ra();
      console.log(JSON.stringify({ a, b }));
    `);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ a: ['SIGTERM', 'SIGTERM'], b: ['SIGTERM', 'SIGTERM'] });
  });

  it('gives the signal back when the last handler is released (the process ends as usual)', async () => {
    const r = await runScript(`
      import { processIO } from ${JSON.stringify(IO_MODULE)};
      const release = processIO().onSignal(() => {});
      release();
      process.kill(process.pid, 'SIGTERM');
      await new Promise((r) => setTimeout(r, 1000));
      console.log('still alive');
    `);
    expect(r.signal).toBe('SIGTERM');
    expect(r.stdout).toBe('');
  });
});

describe('abortOnSignal', () => {
  it('aborts with the InterruptedError of the signal (exit 130 or 143), and gives the signals back on release', async () => {
    const { abortOnSignal } = await import('../../../src/io/io.js');
    const { InterruptedError } = await import('../../../src/errors.js');
    for (const [sent, code] of [
      ['SIGINT', 130],
      ['SIGTERM', 143],
    ] as const) {
      let handler: ((s: 'SIGINT' | 'SIGTERM') => void) | undefined;
      let released = 0;
      const { signal, release } = abortOnSignal({
        onSignal: (h) => {
          handler = h;
          return () => released++;
        },
      });
      expect(signal.aborted).toBe(false);
      handler!(sent);
      expect(signal.reason).toBeInstanceOf(InterruptedError);
      expect((signal.reason as InstanceType<typeof InterruptedError>).exitCode).toBe(code);
      release();
      expect(released).toBe(1);
    }
  });
});
