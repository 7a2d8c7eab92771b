import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runBinary, type RunResult } from '../helpers/binary.js';
import { adminHeaders, startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const fixturePath = (...parts: string[]) => join(ROOT, 'fixtures', ...parts);
export const readFixture = (...parts: string[]) =>
  JSON.parse(readFileSync(fixturePath(...parts), 'utf8')) as Record<string, unknown>;

export interface Env {
  sandbox: TestSandbox;
  /** Key of the campaign without price reject, and of the one with it. */
  directKey: string;
  priceRejectKey: string;
  /** Temporary folder for files the runs write; the runs' working directory unless told otherwise. */
  dir: string;
  run(args: string[], options?: { input?: string; env?: Record<string, string>; cwd?: string }): Promise<RunResult>;
  /** POST /api/legacy directly (to make leads quickly). */
  postRaw(body: Record<string, unknown>): Promise<any>;
  /** Moves the sandbox clock forward. */
  advance(seconds: number): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A sandbox on an ephemeral loopback port, and the binary pointed at it through the environment
 * only; `dir` is a temporary folder (the default working directory), removed by stop().
 */
export async function startEnv(extraArgs: string[] = []): Promise<Env> {
  const sandbox = await startSandboxProcess(extraArgs);
  const dir = mkdtempSync(join(tmpdir(), 'leadctl-e2e-leads-'));
  const env = {
    LEADCTL_BASE_URL: sandbox.baseUrl,
    LEADCTL_CLIENT_ID: sandbox.clientId,
    LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    LEADCTL_CONFIG_DIR: join(dir, 'config'),
    LEADCTL_STATE_DIR: join(dir, 'state'),
    LEADCTL_RETRY_BASE_MS: '20',
    TZ: 'America/Chicago',
  };
  return {
    sandbox,
    directKey: sandbox.campaigns.find((c) => !c.price_reject)!.api_key,
    priceRejectKey: sandbox.campaigns.find((c) => c.price_reject)!.api_key,
    dir,
    run: (args, options = {}) =>
      runBinary(args, { input: options.input, cwd: options.cwd ?? dir, env: { ...env, ...options.env } }),
    async postRaw(body) {
      const res = await fetch(`${sandbox.baseUrl}/api/legacy`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify(body),
      });
      return res.json();
    },
    async advance(seconds) {
      const res = await fetch(`${sandbox.baseUrl}/_sandbox/clock`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...adminHeaders(sandbox) },
        body: JSON.stringify({ advance_seconds: seconds }),
      });
      if (!res.ok) throw new Error(`clock: HTTP ${res.status}`);
    },
    async stop() {
      await sandbox.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A valid lead (the accepted fixture) with its identity changed, so many distinct leads can be made. */
export function variantLead(n: number, apiKey: string): Record<string, unknown> {
  const base = readFixture('legacy', 'accepted.json');
  const serial = String(1000 + n).padStart(4, '0');
  return {
    ...base,
    api_key: apiKey,
    social_security_number: `5${String(10 + (n % 80)).padStart(2, '0')}22${serial}`,
    email: `applicant${n}@example.com`,
    lead_reference_id: `ref-${n}`,
  };
}

/** Requests that reached the sandbox on routes whose key (`METHOD /path`) contains `fragment`. */
export async function requestsTo(sandbox: TestSandbox, fragment: string): Promise<number> {
  const stats = await sandbox.stats();
  return Object.entries(stats.requests.by_route as Record<string, number>)
    .filter(([route]) => route.includes(fragment))
    .reduce((n, [, count]) => n + count, 0);
}

/** The sandbox's current UTC day (its clock may have been moved). */
export async function sandboxDay(sandbox: TestSandbox): Promise<string> {
  return String((await sandbox.stats()).now).slice(0, 10);
}
