import Database from 'better-sqlite3';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN } from '../helpers/binary.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { scratchDir } from '../helpers/scratch.js';

export const FIXTURES = fileURLToPath(new URL('../../fixtures/lms/', import.meta.url));
export const MAPPING = join(FIXTURES, 'mapping.json');

/** Credentials of the sandbox in the environment (the cron way), with private config and state folders. */
export function pushEnv(
  sandbox: Pick<TestSandbox, 'baseUrl' | 'clientId' | 'clientSecret'>,
  stateDir?: string,
): Record<string, string> {
  const home = scratchDir('leadctl-push-home-');
  return {
    HOME: home,
    LEADCTL_CONFIG_DIR: join(home, 'config'),
    LEADCTL_STATE_DIR: stateDir ?? join(home, 'state'),
    LEADCTL_BASE_URL: sandbox.baseUrl,
    LEADCTL_CLIENT_ID: sandbox.clientId,
    LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
    // Short waits between retries keep the flaky-network tests quick; the attempts stay the default.
    LEADCTL_RETRY_BASE_MS: '20',
    LEADCTL_RETRY_MAX_DELAY_MS: '200',
  };
}

/** Starts the binary without waiting for it (signals, overlapping runs). */
export function spawnBinary(
  args: string[],
  env: Record<string, string>,
  cwd?: string,
): ChildProcess & {
  output(): { stdout: string; stderr: string };
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
} {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) base[k] = v;
  const child = spawn(process.execPath, [BIN, ...args], {
    env: { ...base, NO_COLOR: '1', ...env },
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  return Object.assign(child, { output: () => ({ stdout, stderr }), exited });
}

/**
 * Everything the sandbox stored for loan performance, without the ids and timestamps it assigns:
 * two runs that stored the same thing compare equal.
 */
export function dumpLoanPerformance(dataDir: string): { customers: unknown[]; loans: unknown[]; payments: unknown[] } {
  const db = new Database(join(dataDir, 'sandbox.sqlite'), { readonly: true });
  try {
    const customers = db.prepare('SELECT customer_id FROM customers ORDER BY customer_id').all();
    const loans = db
      .prepare(
        `SELECT c.customer_id, l.loan_id, l.lead_id, l.management_system_id, l.is_lead_loan, l.application_type, l.loan_type, l.loan_status,
                l.loan_amount, l.funded_amount, l.first_payment_date, l.applied_at, l.esigned_at, l.withdrawn_at, l.originated_at
         FROM loans l JOIN customers c ON c.id = l.customer_ref ORDER BY c.customer_id, l.loan_id`,
      )
      .all();
    const payments = db
      .prepare(
        `SELECT c.customer_id, l.loan_id, p.payment_id, p.payment_amount, p.payment_type, p.payment_mode, p.payment_status, p.principal, p.interest, p.fees,
                p.bank_routing_number, p.bank_account_number, p.return_code, p.returned_at, p.fail_code, p.failed_at, p.payment_at
         FROM payments p JOIN loans l ON l.id = p.loan_ref JOIN customers c ON c.id = l.customer_ref ORDER BY c.customer_id, l.loan_id, p.payment_id`,
      )
      .all();
    return { customers, loans, payments };
  } finally {
    db.close();
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Chunks the push journals in `stateDir` record as acknowledged by the service. */
export function acknowledged(stateDir: string): number {
  const dir = join(stateDir, 'journals');
  if (!existsSync(dir)) return 0;
  let acks = 0;
  // A journal being rewritten has a `.PID.tmp` twin for a moment: count the journals only.
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.ndjson')) continue;
    let text: string;
    try {
      text = readFileSync(join(dir, file), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    acks += text.split('\n').filter((l) => l.includes('"type":"ack"')).length;
  }
  return acks;
}
