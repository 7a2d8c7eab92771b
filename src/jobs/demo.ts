import { existsSync } from 'node:fs';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Writable } from 'node:stream';
import type { IO, OutputStream, Signal } from '../io/io.js';
import { packagePath } from '../version.js';
import { DemoText } from '../output/demo-report.js';
import type { DemoFile, DemoReport, DemoStepResult } from '../output/demo-report.js';
import type { RunningSandbox } from '../sandbox/index.js';
import { DEMO_STEPS } from './demo-steps.js';
import type { DemoState, DemoStep } from './demo-steps.js';
import { TableReader } from '../ingest/table/reader.js';

export interface DemoOptions {
  /** The user's IO: commands' output is forwarded to it, its environment is NOT passed on as is. */
  io: IO;
  /** Runs one leadctl command in-process (main), as from a shell. */
  runCommand(argv: string[], io: IO): Promise<number>;
  /** Whether this build of leadctl has the subcommand. */
  hasCommand(path: string[]): boolean;
  /** Leave the sandbox running after the steps, until SIGINT/SIGTERM, and keep the files the steps wrote. */
  keep: boolean;
  /** Where the story and the commands' stdout go (stdout, or stderr when stdout carries a JSON summary). */
  narrate: OutputStream;
  color: boolean;
  steps?: DemoStep[];
  /** fixtures/ of the package. */
  fixturesDir?: string;
  /** How long a step may go on after Ctrl-C before the demo leaves it behind and cleans up. */
  stepGraceMs?: number;
}

const STEP_GRACE_MS = 3000;

const FIXTURES = packagePath('fixtures/');

/**
 * Starts a sandbox in this process with a throwaway store and config folder, runs each step's
 * real command against it through `main`, and reports what happened. Never reads or writes the
 * user's profiles: every command gets a fresh environment pointing at the temporary folder.
 */
export async function runDemo(options: DemoOptions): Promise<{ report: DemoReport; interrupted: Signal | undefined }> {
  const { io, narrate } = options;
  const steps = options.steps ?? DEMO_STEPS;
  const fixturesDir = options.fixturesDir ?? FIXTURES;
  const text = new DemoText(options.color, io.cwd);
  const say = (s: string) => writeTo(narrate, s);
  const started = Date.now();

  const root = await mkdtemp(join(tmpdir(), 'leadctl-demo-'));
  const configDir = join(root, 'config');
  const stateDir = join(root, 'state');
  const filesDir = join(root, 'files');
  await Promise.all([mkdir(configDir, { mode: 0o700 }), mkdir(stateDir, { mode: 0o700 }), mkdir(filesDir)]);
  // A demo cut short by the process's exit (`leadctl demo | head -1`: the reader went away, and the
  // entry point exits at once) never reaches its `finally`: the folder, with the sandbox's secret,
  // is removed on the way out all the same.
  const removeOnExit = () => {
    // With --keep, the files stay (what they hold so far), as at the end of a demo; never the secret.
    if (!options.keep) return rmSync(root, { recursive: true, force: true });
    for (const dir of [configDir, stateDir]) rmSync(dir, { recursive: true, force: true });
  };
  process.once('exit', removeOnExit);

  let interrupted: Signal | undefined;
  let onInterrupt: ((signal: Signal) => void) | undefined;
  // Ctrl-C lets the current step finish (or leaves it behind after a grace period), skips the rest
  // and cleans up. The handler stays until the very end: conf's atomic writes (when-exit) re-raise
  // the signal, and with no handler left that echo would kill the process before the cleanup.
  const releaseSignals = io.onSignal((signal) => {
    if (interrupted) return;
    interrupted = signal;
    onInterrupt?.(signal);
  });

  const { startSandbox } = await import('../sandbox/index.js');
  let sandbox: RunningSandbox | undefined;
  try {
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      memory: true,
      onError: (m) => io.stderr.write(`sandbox: ${m}\n`),
    });
    const direct = sandbox.campaigns.find((c) => !c.price_reject);
    const priceReject = sandbox.campaigns.find((c) => c.price_reject);
    const state: DemoState = {
      baseUrl: sandbox.baseUrl,
      clientId: sandbox.clientId,
      clientSecret: sandbox.clientSecret,
      directKey: direct?.api_key ?? '',
      priceRejectKey: priceReject?.api_key ?? '',
      filesDir,
      fixture: (relative) => join(fixturesDir, relative),
      values: {},
    };
    await say(
      `leadctl demo: a sandbox of the service is running on ${sandbox.baseUrl} (in memory, for this run only).\n` +
        `Each step below runs a real leadctl command against it, with a throwaway config folder.\n`,
    );

    const results: DemoStepResult[] = [];
    let stopReason: string | undefined;
    for (const [index, step] of steps.entries()) {
      let giveUp: NodeJS.Timeout | undefined;
      const abandoned = new Promise<Signal>((resolve) => {
        onInterrupt = (signal) => {
          giveUp = setTimeout(() => resolve(signal), options.stepGraceMs ?? STEP_GRACE_MS);
        };
      });
      const result = await runStep(step, index, steps.length, {
        options,
        state,
        text,
        say,
        configDir,
        stateDir,
        stopReason,
        abandoned,
      });
      clearTimeout(giveUp);
      onInterrupt = undefined;
      results.push(result);
      if (interrupted) stopReason ??= `interrupted by ${interrupted}`;
      if (step.essential && result.status !== 'ok') stopReason ??= `the "${step.title}" step did not succeed`;
    }

    const report: DemoReport = {
      ok: results.every((r) => r.status === 'ok' || r.status === 'missing'),
      base_url: sandbox.baseUrl,
      files_dir: filesDir,
      elapsed_seconds: (Date.now() - started) / 1000,
      steps: results,
      missing: results
        .filter((r) => r.status === 'missing')
        .map((r) => `${steps.find((s) => s.id === r.id)!.command.join(' ')}: ${r.reason}`),
      store: sandbox.counts(),
      files: await writtenFiles(filesDir),
      files_kept: options.keep,
    };
    await say(text.summary(report));

    if (options.keep && !interrupted) {
      // Ctrl-C is how a kept sandbox is meant to stop: not an interruption of the demo.
      await new Promise<void>((resolve) => {
        onInterrupt = () => resolve();
        void say(keepInstructions(sandbox!, configDir, stateDir, io.env));
      });
      await say('Stopping the sandbox.\n');
      return { report, interrupted: undefined };
    }
    return { report, interrupted };
  } finally {
    await sandbox?.close();
    // The config folder holds the sandbox's secret and tokens: always removed. The files hold
    // made-up personal data and would pile up in the temp folder: kept only when asked (--keep).
    if (options.keep && (await readdir(filesDir).catch(() => [])).length > 0) {
      await Promise.all([
        rm(configDir, { recursive: true, force: true }),
        rm(stateDir, { recursive: true, force: true }),
      ]);
    } else await rm(root, { recursive: true, force: true });
    process.removeListener('exit', removeOnExit);
    releaseSignals();
  }
}

interface StepContext {
  options: DemoOptions;
  state: DemoState;
  text: DemoText;
  say(s: string): Promise<void>;
  configDir: string;
  stateDir: string;
  stopReason: string | undefined;
  /** Resolves when an interrupted step has had its grace period: the demo stops waiting for it. */
  abandoned: Promise<Signal>;
}

async function runStep(step: DemoStep, index: number, total: number, c: StepContext): Promise<DemoStepResult> {
  const { options, state, text, say } = c;
  const commandArgv = [...step.command, ...step.args(state)];
  // Tables are what a terminal shows by default, so only --output json is worth showing.
  const argv = ['--output', step.json ? 'json' : 'table', ...commandArgv];
  const shownArgv = step.json ? argv : commandArgv;
  const env = step.env?.(state) ?? {};
  const stdin = step.stdin?.(state);
  const shownEnv = Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.shown]));
  const base = { id: step.id, title: step.title, command: text.command(shownArgv, shownEnv, stdin?.shown) };

  await say(text.heading(index + 1, total, step.title));
  const missingFixture = (step.fixtures ?? []).find((f) => !existsSync(state.fixture(f)));
  let result: DemoStepResult | undefined;
  if (!options.hasCommand(step.command)) {
    result = {
      ...base,
      status: 'missing',
      exit_code: null,
      reason: `this build of leadctl has no \`${step.command.join(' ')}\` command yet`,
    };
  } else if (missingFixture) {
    result = {
      ...base,
      status: 'missing',
      exit_code: null,
      reason: `fixture ${text.path(state.fixture(missingFixture))} is missing`,
    };
  } else if (c.stopReason) {
    result = { ...base, status: 'skipped', exit_code: null, reason: c.stopReason };
  }
  if (result) {
    await say(text.outcome(result));
    return result;
  }

  await say(text.explain(step.explain));
  await say(text.commandLine(base.command));
  const captured: Buffer[] = [];
  // A step left behind must not write over the rest of the story.
  let live = true;
  const childIO: IO = {
    stdin: Object.assign(Readable.from(stdin ? [Buffer.from(stdin.text)] : []), { isTTY: false }),
    stdout: forwardTo(options.narrate, () => live, step.json ? captured : undefined),
    stderr: forwardTo(options.io.stderr, () => live),
    env: childEnv(options.io.env, {
      LEADCTL_CONFIG_DIR: c.configDir,
      LEADCTL_STATE_DIR: c.stateDir,
      ...Object.fromEntries(Object.entries(env).map(([k, v]) => [k, v.value])),
    }),
    cwd: options.io.cwd,
    now: options.io.now,
    onSignal: options.io.onSignal,
  };
  const code = await Promise.race([options.runCommand(argv, childIO), c.abandoned.then((signal) => signal)]);
  if (typeof code === 'string') {
    live = false;
    result = {
      ...base,
      status: 'skipped',
      exit_code: null,
      reason: `still running ${((options.stepGraceMs ?? STEP_GRACE_MS) / 1000).toFixed(0)} s after ${code}; left behind`,
    };
    await say(text.outcome(result));
    return result;
  }
  const meaning = step.expect[code];
  if (meaning !== undefined && step.capture) {
    try {
      step.capture(Buffer.concat(captured).toString('utf8'), state);
    } catch (error) {
      result = {
        ...base,
        status: 'unexpected',
        exit_code: code,
        reason: `could not read its output: ${(error as Error).message}`,
      };
    }
  }
  result ??=
    meaning !== undefined
      ? { ...base, status: 'ok', exit_code: code, meaning }
      : {
          ...base,
          status: 'unexpected',
          exit_code: code,
          reason: `expected exit ${Object.keys(step.expect).join(' or ')}`,
        };
  await say(text.outcome(result));
  return result;
}

/** The user's environment without any LEADCTL_* setting (it could point at the real service), plus the demo's. */
function childEnv(
  userEnv: Record<string, string | undefined>,
  demo: Record<string, string>,
): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = {};
  for (const [k, v] of Object.entries(userEnv)) if (!k.startsWith('LEADCTL_')) env[k] = v;
  return { ...env, ...demo };
}

/** A stream for a command's output that passes everything to `target` (and keeps a copy when asked). */
function forwardTo(target: OutputStream, live: () => boolean, copy?: Buffer[]): OutputStream {
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!live()) return done();
      copy?.push(Buffer.from(chunk));
      if (target.write(chunk)) done();
      else target.once('drain', () => done());
    },
  });
  return Object.assign(stream, { isTTY: target.isTTY, columns: target.columns });
}

function writeTo(stream: OutputStream, s: string): Promise<void> {
  return new Promise((resolve) => {
    if (stream.write(s)) resolve();
    else stream.once('drain', () => resolve());
  });
}

async function writtenFiles(dir: string): Promise<DemoFile[]> {
  const names = (await readdir(dir).catch(() => [] as string[])).sort();
  const files: DemoFile[] = [];
  for (const name of names) {
    const path = join(dir, name);
    let records = 0;
    const reader = new TableReader({ delimiter: ',', file: path });
    const count = (cells: string[]) => {
      if (cells.length > 1 || cells[0] !== '') records++;
    };
    reader.write(await readFile(path, 'utf8'), count);
    reader.end(count);
    files.push({ path, rows: Math.max(0, records - 1) });
  }
  return files;
}

function keepInstructions(
  sandbox: RunningSandbox,
  configDir: string,
  stateDir: string,
  userEnv: Record<string, string | undefined>,
): string {
  const keys = sandbox.campaigns.map(
    (c) => `  ${c.name}${c.price_reject ? ' (price reject)' : ''}: LEADCTL_API_KEY=${c.api_key}`,
  );
  // Settings in the user's shell beat the profile and could send the next command to another service.
  const overriding = Object.keys(userEnv).filter(
    (k) =>
      k.startsWith('LEADCTL_') && userEnv[k] !== undefined && k !== 'LEADCTL_CONFIG_DIR' && k !== 'LEADCTL_STATE_DIR',
  );
  return [
    '',
    `The sandbox keeps running on ${sandbox.baseUrl} (--keep). Point leadctl at it from another terminal:`,
    '',
    ...(overriding.length ? [`  unset ${overriding.sort().join(' ')}`] : []),
    `  export LEADCTL_CONFIG_DIR=${configDir}`,
    `  export LEADCTL_STATE_DIR=${stateDir}`,
    '  leadctl auth status',
    '  leadctl lists ls',
    `  leadctl leads ids --date today`,
    `  curl -s -H 'Authorization: Bearer ${sandbox.adminToken}' ${sandbox.baseUrl}/_sandbox/stats   # what it stored`,
    '',
    "The first folder holds the demo's profile (base URL, client id and secret), the second the push",
    'journals and locks, so your own are never touched. Campaign keys for `leadctl legacy post`:',
    ...keys,
    '',
    'Both folders are removed when the sandbox stops. Press Ctrl-C to stop it.',
    '',
  ].join('\n');
}
