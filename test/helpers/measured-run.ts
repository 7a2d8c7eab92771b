import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN } from './binary.js';

const PRELOAD = new URL('./max-rss.mjs', import.meta.url).href;

export interface MeasuredResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Peak resident set size of the run, in MB (from its own process.resourceUsage at exit). */
  maxRssMb: number | undefined;
  /** Wall time from the start, and from `kill` when it was called. */
  ms: number;
  msAfterKill?: number;
}

export interface MeasuredRun {
  kill(signal: NodeJS.Signals): void;
  done: Promise<MeasuredResult>;
}

/**
 * Runs the built binary as runBinary does (its own environment, no inherited LEADCTL_*), and
 * measures its peak memory and wall time; `kill` sends it a signal.
 */
export function measuredRun(
  args: string[],
  options: { env?: Record<string, string>; cwd?: string; timeoutMs?: number } = {},
): MeasuredRun {
  const dir = mkdtempSync(join(tmpdir(), 'leadctl-rss-'));
  const rssFile = join(dir, 'max-rss');
  const baseEnv: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) baseEnv[k] = v;
  const started = performance.now();
  let killedAt: number | undefined;
  const child = spawn(process.execPath, ['--import', PRELOAD, BIN, ...args], {
    env: { ...baseEnv, NO_COLOR: '1', ...options.env, LEADCTL_TEST_RSS_FILE: rssFile },
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 120_000);
  const done = new Promise<MeasuredResult>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const ended = performance.now();
      let maxRssMb: number | undefined;
      try {
        maxRssMb = Number(readFileSync(rssFile, 'utf8')) / 1024;
      } catch {
        maxRssMb = undefined;
      }
      rmSync(dir, { recursive: true, force: true });
      resolve({
        code,
        signal,
        stdout,
        stderr,
        maxRssMb,
        ms: ended - started,
        ...(killedAt !== undefined ? { msAfterKill: ended - killedAt } : {}),
      });
    });
  });
  return {
    kill(signal) {
      killedAt ??= performance.now();
      child.kill(signal);
    },
    done,
  };
}
