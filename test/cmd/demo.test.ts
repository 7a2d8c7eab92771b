import { existsSync, readdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { IO } from '../../src/io/io.js';
import { main } from '../../src/cli/main.js';
import { DEMO_STEPS } from '../../src/jobs/demo-steps.js';
import type { DemoStep } from '../../src/jobs/demo-steps.js';
import { runDemo } from '../../src/jobs/demo.js';
import { memoryIO } from '../helpers/memory-io.js';

const leftovers: string[] = [];
afterAll(() => {
  for (const dir of leftovers) rmSync(dir, { recursive: true, force: true });
});

const login = DEMO_STEPS.find((s) => s.id === 'login')!;
const systems = DEMO_STEPS.find((s) => s.id === 'systems-ls')!;

describe('the demo runner', () => {
  it('reports a step whose command this build lacks as missing, and never runs it', async () => {
    const io = memoryIO();
    const ran: string[][] = [];
    const notYet: DemoStep = {
      id: 'future',
      title: 'A command still being written',
      explain: '',
      command: ['frobnicate'],
      args: () => [],
      expect: { 0: 'done' },
    };
    const noFixture: DemoStep = {
      ...systems,
      id: 'needs-fixture',
      title: 'Needs a fixture',
      fixtures: ['nowhere/none.csv'],
    };
    const { report } = await runDemo({
      io,
      narrate: io.stdout,
      color: false,
      keep: false,
      steps: [login, notYet, noFixture, systems],
      hasCommand: (path) => path[0] !== 'frobnicate',
      runCommand: (argv: string[], childIO: IO) => {
        ran.push(argv);
        return main(argv, childIO);
      },
    });
    leftovers.push(dirname(report.files_dir));
    // Without --keep nothing of the demo is left in the temp folder.
    expect(report.files_kept).toBe(false);
    expect(existsSync(dirname(report.files_dir))).toBe(false);

    expect(report.steps.map((s) => [s.id, s.status])).toEqual([
      ['login', 'ok'],
      ['future', 'missing'],
      ['needs-fixture', 'missing'],
      ['systems-ls', 'ok'],
    ]);
    expect(ran.map((argv) => argv.slice(2, 4).join(' '))).toEqual(['auth login', 'systems ls']);
    expect(report.ok).toBe(true);
    expect(report.missing).toEqual([
      'frobnicate: this build of leadctl has no `frobnicate` command yet',
      expect.stringMatching(/^systems ls: fixture .*nowhere\/none\.csv is missing$/),
    ]);
    expect(io.stdoutText()).toContain('Not shown (not in this build of leadctl yet):');
  });

  it("stops after an essential step fails, and never uses the user's LEADCTL_ settings", async () => {
    const io = memoryIO({ env: { LEADCTL_BASE_URL: 'http://127.0.0.1:9', LEADCTL_CLIENT_ID: 'someone-else' } });
    const envs: Array<Record<string, string | undefined>> = [];
    const badLogin: DemoStep = { ...login, stdin: () => ({ text: 'wrong-secret\n', shown: '(a wrong secret)' }) };
    const { report } = await runDemo({
      io,
      narrate: io.stdout,
      color: false,
      keep: false,
      steps: [badLogin, systems],
      hasCommand: () => true,
      runCommand: (argv, childIO) => {
        envs.push(childIO.env);
        return main(argv, childIO);
      },
    });
    if (existsSync(report.files_dir)) leftovers.push(dirname(report.files_dir));

    expect(report.steps.map((s) => [s.id, s.status, s.exit_code])).toEqual([
      ['login', 'unexpected', 3],
      ['systems-ls', 'skipped', null],
    ]);
    expect(report.ok).toBe(false);
    expect(envs).toHaveLength(1);
    expect(envs[0]!.LEADCTL_BASE_URL).toBeUndefined();
    expect(envs[0]!.LEADCTL_CLIENT_ID).toBeUndefined();
    expect(envs[0]!.LEADCTL_CONFIG_DIR).toMatch(/leadctl-demo-/);
    // The wrong secret is never echoed.
    expect(io.stdoutText() + io.stderrText()).not.toContain('wrong-secret');
  });

  it('on Ctrl-C lets the running step finish, skips the rest, cleans up and reports the signal (even if it comes twice)', async () => {
    const io = memoryIO();
    const ran: string[] = [];
    const { report, interrupted } = await runDemo({
      io,
      narrate: io.stdout,
      color: false,
      keep: false,
      steps: [login, systems],
      hasCommand: () => true,
      runCommand: async (argv, childIO) => {
        ran.push(argv.slice(2, 4).join(' '));
        // What a terminal does while the first step runs; conf's when-exit re-raises it once more.
        io.sendSignal('SIGINT');
        io.sendSignal('SIGINT');
        return main(argv, childIO);
      },
    });
    leftovers.push(dirname(report.files_dir));

    expect(interrupted).toBe('SIGINT');
    expect(ran).toEqual(['auth login']);
    expect(report.steps.map((s) => [s.id, s.status, s.exit_code])).toEqual([
      ['login', 'ok', 0],
      ['systems-ls', 'skipped', null],
    ]);
    expect(report.steps[1]!.reason).toBe('interrupted by SIGINT');
    expect(existsSync(dirname(report.files_dir))).toBe(false);
  });

  it('leaves a step that is still running after the grace period behind, and says so', async () => {
    const io = memoryIO();
    const hung: DemoStep = { ...systems, id: 'hung', title: 'A step that never ends' };
    const { report, interrupted } = await runDemo({
      io,
      narrate: io.stdout,
      color: false,
      keep: false,
      stepGraceMs: 20,
      steps: [hung, systems],
      hasCommand: () => true,
      runCommand: async (_argv, childIO) => {
        io.sendSignal('SIGTERM');
        await new Promise<void>(() => {});
        childIO.stdout.write('never shown\n');
        return 0;
      },
    });
    if (existsSync(report.files_dir)) leftovers.push(dirname(report.files_dir));

    expect(interrupted).toBe('SIGTERM');
    expect(report.steps.map((s) => [s.id, s.status])).toEqual([
      ['hung', 'skipped'],
      ['systems-ls', 'skipped'],
    ]);
    expect(report.steps[0]!.reason).toMatch(/after SIGTERM; left behind/);
    expect(io.stdoutText()).toContain('left behind');
  });

  it("--keep says how to reach the sandbox without the user's own settings, and Ctrl-C ends it cleanly", async () => {
    const io = memoryIO({
      env: { LEADCTL_BASE_URL: 'https://lender.example', LEADCTL_PROFILE: 'prod', LEADCTL_CONFIG_DIR: '/nowhere/mine' },
    });
    const done = runDemo({
      io,
      narrate: io.stdout,
      color: false,
      keep: true,
      steps: [login],
      hasCommand: () => true,
      runCommand: main,
    });
    await expect.poll(() => io.stdoutText(), { timeout: 20_000 }).toContain('Press Ctrl-C to stop it.');
    const text = io.stdoutText();
    const configDir = /export LEADCTL_CONFIG_DIR=(\S+)/.exec(text)?.[1];
    const stateDir = /export LEADCTL_STATE_DIR=(\S+)/.exec(text)?.[1];
    expect(configDir).toMatch(/leadctl-demo-.*config$/);
    expect(stateDir).toMatch(/leadctl-demo-.*state$/);
    expect(text).toContain('unset LEADCTL_BASE_URL LEADCTL_PROFILE\n');
    expect(readdirSync(configDir!)).toContain('config.json');

    io.sendSignal('SIGINT');
    const { report, interrupted } = await done;
    expect(interrupted).toBeUndefined();
    expect(report.ok).toBe(true);
    expect(io.stdoutText()).toMatch(/Stopping the sandbox\.\n$/);
    expect(existsSync(configDir!)).toBe(false);
    expect(existsSync(stateDir!)).toBe(false);
  });
});

describe('demo --help', () => {
  it('promises the time the demo really takes (about a second, not ten)', async () => {
    const io = memoryIO();
    expect(await main(['demo', '--help'], io)).toBe(0);
    const help = io.stdoutText().replace(/\s+/g, ' ');
    expect(help).toContain('(a few seconds; your profiles are never touched)');
    expect(help).not.toContain('10 seconds');
  });
});
