import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { startSandbox } from '../../src/sandbox/index.js';
import type { RunningSandbox, SandboxOptions } from '../../src/sandbox/index.js';
import { BIN } from './binary.js';

export interface SandboxCampaignKey {
  api_key: string;
  price_reject: boolean;
}

export interface TestSandbox {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  campaigns: SandboxCampaignKey[];
  /** Bearer token of the /_sandbox admin endpoints. */
  adminToken: string;
  /** GET /_sandbox/stats: store counts, requests by route, faults applied. */
  stats(): Promise<any>;
  stop(): Promise<void>;
}

/** The Authorization header of the /_sandbox admin endpoints. */
export function adminHeaders(sb: Pick<TestSandbox, 'adminToken'>): Record<string, string> {
  return { authorization: `Bearer ${sb.adminToken}` };
}

async function fetchStats(baseUrl: string, adminToken: string): Promise<any> {
  const res = await fetch(`${baseUrl}/_sandbox/stats`, { headers: adminHeaders({ adminToken }) });
  if (!res.ok) throw new Error(`GET /_sandbox/stats answered ${res.status}`);
  return res.json();
}

/**
 * Spawns the built binary: `leadctl sandbox start --port 0 --memory --output json ...extraArgs`
 * (without --memory when extraArgs has --data-dir), and waits for its JSON line. `fileLimit`
 * starts it under `ulimit -n` (a POSIX shell is needed).
 */
export function startSandboxProcess(
  extraArgs: string[] = [],
  options: { fileLimit?: number } = {},
): Promise<TestSandbox & { process: ChildProcess; stderr(): string }> {
  const storeArgs = extraArgs.includes('--data-dir') ? [] : ['--memory'];
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) env[k] = v;
  const argv = [
    process.execPath,
    BIN,
    'sandbox',
    'start',
    '--port',
    '0',
    ...storeArgs,
    '--output',
    'json',
    ...extraArgs,
  ];
  const [command, ...args] =
    options.fileLimit === undefined
      ? argv
      : ['/bin/sh', '-c', `ulimit -n ${options.fileLimit} && exec "$@"`, 'sh', ...argv];
  const child = spawn(command!, args, {
    env: { ...env, NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      reject(new Error(`sandbox exited before it was ready (code ${code}, signal ${signal}): ${stderr.trim()}`));
    child.once('exit', onExit);
    child.once('error', reject);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      const newline = stdout.indexOf('\n');
      if (newline < 0) return;
      child.off('exit', onExit);
      try {
        const line = JSON.parse(stdout.slice(0, newline)) as {
          base_url: string;
          client_id: string;
          client_secret: string;
          admin_token: string;
          campaigns: SandboxCampaignKey[];
        };
        resolve({
          process: child,
          baseUrl: line.base_url,
          clientId: line.client_id,
          clientSecret: line.client_secret,
          campaigns: line.campaigns,
          adminToken: line.admin_token,
          stats: () => fetchStats(line.base_url, line.admin_token),
          stderr: () => stderr,
          async stop() {
            if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
            await exited;
          },
        });
      } catch (err) {
        child.kill('SIGKILL');
        reject(
          new Error(
            `sandbox printed an unreadable first line: ${stdout.slice(0, newline)} (${(err as Error).message})`,
          ),
        );
      }
    });
  });
}

/** Starts a sandbox in this process (in-memory store, ephemeral loopback port unless told otherwise). */
export async function startSandboxInProcess(
  options: SandboxOptions = {},
): Promise<TestSandbox & { sandbox: RunningSandbox }> {
  const sandbox = await startSandbox({ host: '127.0.0.1', port: 0, memory: options.dataDir === undefined, ...options });
  return {
    sandbox,
    baseUrl: sandbox.baseUrl,
    get clientId() {
      return sandbox.clientId;
    },
    get clientSecret() {
      return sandbox.clientSecret;
    },
    campaigns: sandbox.campaigns.map((c) => ({ api_key: c.api_key, price_reject: c.price_reject })),
    adminToken: sandbox.adminToken,
    stats: () => fetchStats(sandbox.baseUrl, sandbox.adminToken),
    stop: () => sandbox.close(),
  };
}

/**
 * Spawns `leadctl sandbox start --memory --port 0 --env ...extraArgs` with `env` (on top of the
 * test's own environment without LEADCTL_*, unless `bare`), and resolves once it has printed its
 * `export` lines (the sandbox is listening and any --save-profile is written).
 */
export function startSandboxWithEnv(
  extraArgs: string[],
  env: Record<string, string>,
  options: { bare?: boolean } = {},
): Promise<{ process: ChildProcess; stdout: string; stop(): Promise<void> }> {
  const base: Record<string, string> = {};
  if (!options.bare)
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) base[k] = v;
  const child = spawn(process.execPath, [BIN, 'sandbox', 'start', '--memory', '--port', '0', '--env', ...extraArgs], {
    env: { ...base, NO_COLOR: '1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  let stdout = '';
  let stderr = '';
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`sandbox exited (${code}) before it was ready: ${stderr.trim()}`)));
    child.once('error', reject);
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      stdout += d;
      if (/LEADCTL_API_KEY=.*\n/.test(stdout)) resolve({ process: child, stdout, stop });
    });
  });
}
