import { describe, expect, it } from 'vitest';
import { errorLines, runBinary } from '../helpers/binary.js';

describe('the leadctl binary', () => {
  it('--version exits 0 and prints a semantic version', async () => {
    const r = await runBinary(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('an unknown command exits 2: written once on stderr, as JSON when JSON is implied (stdout and stderr piped), else as text', async () => {
    const r = await runBinary(['no-such-command']);
    expect(r.code).toBe(2);
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      error: {
        code: 'usage',
        exit_code: 2,
        message: "unknown command 'no-such-command'",
        hint: 'the commands of `leadctl` are auth, systems, lists, customers, loans, payments, mapping, leads, dry-run, legacy, state, doctor, sandbox, demo, completion; run `leadctl --help` for usage and examples',
      },
    });
    // stdout stays clean for whatever it was redirected to
    expect(r.stdout).toBe('');
    const hint = JSON.parse(lines[0]!).error.hint as string;
    const json = await runBinary(['no-such-command', '-o', 'json']);
    expect(JSON.parse(json.stdout).error.code).toBe('usage');
    expect(json.stderr).toBe(`Error: unknown command 'no-such-command'\nHint: ${hint}\n`);
    const table = await runBinary(['no-such-command', '-o', 'table']);
    expect(table.stdout).toBe('');
    expect(table.stderr).toBe(`Error: unknown command 'no-such-command'\nHint: ${hint}\n`);
  });

  it('a mistyped option gets a suggestion', async () => {
    const r = await runBinary(['lists', 'ls', '--al']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toContain("Error: unknown option '--al' (did you mean --all?)");
  });
});

describe('a reader that goes away (leadctl … | head)', () => {
  it('ends quietly with exit 0, no EPIPE stack trace', async () => {
    const { spawn } = await import('node:child_process');
    const { BIN } = await import('../helpers/binary.js');
    const child = spawn(process.execPath, [BIN, 'completion', 'bash'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // Close our end before leadctl writes: its first write meets a closed pipe.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const code = await new Promise<number | null>((resolve) => child.on('close', (c) => resolve(c)));
    expect(stderr).not.toMatch(/EPIPE|Error/);
    expect(code).toBe(0);
  });
});
