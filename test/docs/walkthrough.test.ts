import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { README, running, runWalkthrough, walkthroughBlocks, type Walkthrough } from './walkthrough.js';

describe('the README walkthrough', () => {
  it('reads the marked blocks, in order, with the exit code each is meant to end with', () => {
    const blocks = walkthroughBlocks(
      [
        'text',
        '```sh walkthrough',
        'a',
        'b',
        '```',
        '```sh',
        'not this',
        '```',
        '```sh walkthrough exit=4',
        'c',
        '```',
      ].join('\n'),
    );
    expect(blocks).toEqual([
      { line: 2, code: 'a\nb', expectExit: 0 },
      { line: 9, code: 'c', expectExit: 4 },
    ]);
    expect(() => walkthroughBlocks('```sh walkthrough\nopen')).toThrow(/not closed/);
  });

  it('runs block by block in a fresh folder against its own sandbox, each ending as the README says, and leaves nothing running', async () => {
    const blocks = walkthroughBlocks(readFileSync(README, 'utf8'));
    expect(blocks.length).toBeGreaterThanOrEqual(9);
    let w: Walkthrough | undefined;
    try {
      w = await runWalkthrough({ keep: true });
      const ends = w.results.map((r) => ({
        line: r.block.line,
        exit: r.exitCode,
        output: r.exitCode === r.block.expectExit ? '' : r.output,
      }));
      expect(ends).toEqual(blocks.map((b) => ({ line: b.line, exit: b.expectExit, output: '' })));
      // The walkthrough starts a sandbox in the background; it must be gone once the run is over.
      const vars = readFileSync(join(w.root, 'state', 'vars'), 'utf8');
      const pid = Number(/SANDBOX_PID="?(\d+)/.exec(vars)?.[1]);
      expect(pid).toBeGreaterThan(0);
      expect(running(pid)).toBe(false);
      expect(existsSync(join(w.workDir, 'rejects.csv'))).toBe(true);
    } finally {
      if (w) rmSync(w.root, { recursive: true, force: true });
    }
  }, 300_000);

  it("step 1 stops with the sandbox's own error when the sandbox cannot start, and no sandbox.env", async () => {
    const [first] = walkthroughBlocks(readFileSync(README, 'utf8'));
    expect(first!.code).toContain('leadctl sandbox start');
    // A profile named "sandbox" that points at a real service: `--save-profile sandbox` refuses to start.
    const prelude = `mkdir -p "$LEADCTL_CONFIG_DIR" && printf '%s' '${JSON.stringify({
      current_profile: 'sandbox',
      profiles: { sandbox: { base_url: 'https://api.example.com', client_id: 'id', client_secret: 'secret' } },
    })}' > "$LEADCTL_CONFIG_DIR/config.json"`;
    const w = await runWalkthrough({ blocks: [first!], prelude, keep: true });
    try {
      const [result] = w.results;
      // Not the runner's timeout (120 s, SIGTERM): the block ends by itself, having shown the sandbox's message.
      expect(result!.signal).toBeNull();
      expect(result!.exitCode).not.toBe(0);
      // The runner's stdout is no terminal, so the log holds the JSON document (quotes escaped); a person's, text.
      expect(result!.output).toMatch(
        /the profile \\?"sandbox\\?" points at https:\/\/api\.example\.com, not a local sandbox/,
      );
      expect(existsSync(join(w.workDir, 'sandbox.env'))).toBe(false);
    } finally {
      rmSync(w.root, { recursive: true, force: true });
    }
  }, 180_000);

  it('fails a block that ends otherwise than the README says, and stops what it started', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'leadctl-wt-'));
    try {
      const readme = join(dir, 'README.md');
      writeFileSync(
        readme,
        [
          '```sh walkthrough',
          'sleep 300 &',
          'SLEEPER=$!',
          'export GREETING=hello',
          '```',
          '```sh walkthrough',
          'test "$GREETING" = hello',
          'leadctl --version',
          'false',
          'echo unreachable',
          '```',
          '```sh walkthrough',
          'echo never',
          '```',
          '',
        ].join('\n'),
      );
      const w = await runWalkthrough({ readme, keep: true });
      try {
        expect(w.results.map((r) => r.exitCode)).toEqual([0, 1]);
        expect(w.results[1]!.output).toMatch(/^\d+\.\d+\.\d+\n$/);
        const pid = Number(/SLEEPER="?(\d+)/.exec(readFileSync(join(w.root, 'state', 'vars'), 'utf8'))?.[1]);
        expect(pid).toBeGreaterThan(0);
        expect(running(pid)).toBe(false);
      } finally {
        rmSync(w.root, { recursive: true, force: true });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
