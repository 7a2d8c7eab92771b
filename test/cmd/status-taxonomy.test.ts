import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { buildProgram, main } from '../../src/cli/main.js';
import {
  CONTRACT_CLIENT_ID as CLIENT_ID,
  CONTRACT_CLIENT_SECRET,
  startContractServer,
  type ContractServer,
  type SeenRequest,
} from '../helpers/contract-server.js';
import { memoryIO } from '../helpers/memory-io.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';

/**
 * The status taxonomy, command by command: a service that answers the command's own request
 * with each status gets the documented exit code, message and hint (docs/output.md "Exit codes").
 */

const MAPPING = fileURLToPath(new URL('../../fixtures/lms/mapping.json', import.meta.url));
const LEGACY = fileURLToPath(new URL('../../fixtures/legacy/accepted.json', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-taxonomy-'));
let status = 200;
/** Answer the target with a captive portal's page and HTTP 200 instead. */
let portal = false;
const PORTAL = '<!DOCTYPE html><html><head><title>Sign in to Wi-Fi</title></head></html>';
let server: ContractServer;

beforeAll(async () => {
  server = await startContractServer({
    listsPrefix: 'lead-management',
    leadIds: [5, 6],
    answer: (req) =>
      isTarget(req) && portal
        ? { status: 200, body: PORTAL, headers: { 'content-type': 'text/html; charset=utf-8' } }
        : isTarget(req) && status !== 200
          ? {
              status,
              body:
                status === 422 || status === 409
                  ? {
                      message: 'The given data was invalid.',
                      errors: { customer_id: ['The customer id has already been taken.'] },
                    }
                  : { message: 'No.' },
            }
          : undefined,
  });
  writeFileSync(join(work, 'ssn.csv'), 'ssn\n345678901\n');
  writeFileSync(join(work, 'secret.txt'), CONTRACT_CLIENT_SECRET + '\n');
  writeFileSync(
    join(work, 'customers.json'),
    JSON.stringify({
      customer_id: 'C1',
      lead_loan: {
        loan_id: 'L1',
        lead_id: 500101,
        loan_amount: 50000,
        applied_at: '2026-03-06T16:15:00Z',
        loan_status: 'current',
      },
    }),
  );
  const loan = (id: string) => ({
    customer_id: 'C1',
    loan_id: id,
    lead_id: 500101,
    loan_amount: 50000,
    applied_at: '2026-03-06T16:15:00Z',
    loan_status: 'current',
  });
  writeFileSync(join(work, 'loans.json'), JSON.stringify([loan('L1'), loan('L2')]));
  writeFileSync(
    join(work, 'payments.json'),
    JSON.stringify({
      customer_id: 'C1',
      loan_id: 'L1',
      lead_id: 500101,
      payment_id: 'P1',
      payment_amount: 100,
      payment_status: 'paid',
      payment_at: '2026-03-20T15:00:00Z',
    }),
  );
  await writeExport({
    out: join(work, 'export'),
    customers: 3,
    seed: 2,
    paymentsPerCustomer: 1,
    shapes: ['denormalised'],
  });
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

let target: (req: SeenRequest) => boolean = () => false;
const isTarget = (req: SeenRequest) => target(req);

interface Case {
  name: string;
  argv: string[];
  target: (req: SeenRequest) => boolean;
  /** True for the commands that send records and report each one (a refusal is a rejected record: exit 4). */
  records?: boolean;
  /** A 404 is about a named object the record refers to (a loan's customer): that record is rejected. */
  recordNotFound?: boolean;
  /** Never repeated once it may have reached the service (the legacy post). */
  unsafe?: boolean;
  /** The token endpoint: a 400 there refuses the credentials. */
  token?: boolean;
}

const CASES: Case[] = [
  {
    name: 'lists ls',
    argv: ['lists', 'ls'],
    target: (r) => r.method === 'GET' && r.path === '/api/v1/lead-management/lists',
  },
  {
    name: 'lists get',
    argv: ['lists', 'get', '1'],
    target: (r) => r.method === 'GET' && r.path === '/api/v1/lead-management/lists/1',
  },
  {
    name: 'lists create',
    argv: ['lists', 'create', 'ssn.csv', '--name', 'n', '--type', 'ssn'],
    target: (r) => r.method === 'POST' && r.path === '/api/v1/lead-management/lists',
  },
  {
    name: 'customers push',
    argv: ['customers', 'push', 'customers.json'],
    target: (r) => r.method === 'POST' && r.path === '/api/v1/loan-performance/customers',
    records: true,
  },
  {
    name: 'loans push',
    argv: ['loans', 'push', 'loans.json'],
    target: (r) => r.path.endsWith('/loans'),
    records: true,
    recordNotFound: true,
  },
  {
    name: 'payments push',
    argv: ['payments', 'push', 'payments.json'],
    target: (r) => r.path.endsWith('/payments'),
    records: true,
    recordNotFound: true,
  },
  {
    name: 'customers batch',
    argv: ['customers', 'batch', 'export/export.csv', '--mapping', MAPPING],
    target: (r) => r.path.includes('/batches/'),
    records: true,
  },
  {
    name: 'leads ids',
    argv: ['leads', 'ids', '--date', '2026-01-05'],
    target: (r) => r.path === '/api/v1/lead-data/lead-ids',
  },
  { name: 'leads get', argv: ['leads', 'get', '5'], target: (r) => r.path === '/api/v1/lead-data/leads/5' },
  {
    name: 'leads get (several)',
    argv: ['leads', 'get', '5', '6'],
    target: (r) => r.path === '/api/v1/lead-data/leads/5',
    records: true,
    recordNotFound: true,
  },
  {
    name: 'leads export',
    argv: ['leads', 'export', '--date', '2026-01-05', '--out', 'leads.csv', '--retries', '0'],
    target: (r) => r.path === '/api/v1/lead-data/leads/5',
    records: true,
    recordNotFound: true,
  },
  {
    name: 'dry-run',
    argv: ['dry-run', '--ssn', '345678901'],
    target: (r) => r.path === '/api/v1/lead-processing/dry-run',
  },
  { name: 'systems ls', argv: ['systems', 'ls'], target: (r) => r.path === '/api/v1/resources/management-systems' },
  {
    name: 'auth login',
    argv: ['auth', 'login', '--client-id', CLIENT_ID, '--client-secret-file', 'secret.txt', '--profile', 'matrix'],
    target: (r) => r.path === '/oauth/token',
    token: true,
  },
  {
    name: 'legacy post',
    argv: ['legacy', 'post', LEGACY, '--api-key', 'campaign-key-1'],
    target: (r) => r.path === '/api/legacy',
    unsafe: true,
  },
];

/** The long options a command accepts: its own and every parent's (global options). */
function optionsOf(argv: string[]): Set<string> {
  let cmd: Command = buildProgram(memoryIO(), () => async () => undefined);
  const names = new Set<string>(['--help']);
  const add = (c: Command) =>
    c.options.forEach(
      (o) => o.long && names.add(o.long) && o.long.startsWith('--no-') && names.add(o.long.replace(/^--no-/, '--')),
    );
  add(cmd);
  for (const word of argv) {
    const sub = cmd.commands.find((c) => c.name() === word);
    if (!sub) break;
    cmd = sub;
    add(cmd);
  }
  return names;
}

function expected(c: Case, code: number): number {
  if (code === 401 || code === 403 || (c.token && code === 400)) return 3;
  if (code === 429 || code >= 500) return 5;
  if ([400, 409, 422].includes(code)) return c.records ? 4 : 2;
  if (code === 404 || code === 410) return c.recordNotFound ? 4 : 2;
  return 2;
}

async function run(argv: string[]) {
  const io = memoryIO({
    cwd: work,
    env: {
      LEADCTL_BASE_URL: server.baseUrl,
      LEADCTL_CLIENT_ID: server.clientId,
      LEADCTL_CLIENT_SECRET: server.clientSecret,
      LEADCTL_CONFIG_DIR: join(work, 'config'),
      LEADCTL_STATE_DIR: join(work, 'state'),
      LEADCTL_RETRY_ATTEMPTS: '2',
      LEADCTL_RETRY_BASE_MS: '1',
      LEADCTL_RETRY_MAX_DELAY_MS: '1',
    },
  });
  const code = await main(['-o', 'json', ...argv], io);
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

describe.each(CASES)('$name', (c) => {
  it.each([400, 401, 403, 404, 405, 409, 410, 414, 422, 429, 500])('HTTP %i', async (code) => {
    status = code;
    target = c.target;
    const requests = () => (c.token ? server.seen : server.api());
    const before = requests().filter(c.target).length;
    const tokensBefore = server.tokens();
    const res = await run(c.argv);
    const text = res.stdout + res.stderr;
    expect({ code: res.code, text }).toMatchObject({ code: expected(c, code) });
    const sent = requests().filter(c.target).length - before;
    expect(sent).toBeGreaterThan(0);
    // Only 429 and 5xx are repeated (twice here); 401 once more with a new token.
    if (c.unsafe || (c.token && code !== 429 && code !== 500)) expect(sent).toBe(1);
    else if (code === 429 || code === 500) expect(sent % 2).toBe(0);
    else if (code === 401) expect(server.tokens() - tokensBefore).toBe(2);
    else if (!c.records) expect(sent).toBe(1);
    if (code < 500 && code !== 429) expect(text).not.toMatch(/unavailable|safe to repeat|having trouble/);
    if (c.unsafe) expect(text).not.toMatch(/safe to repeat|access token/);
    if (code === 403 && !c.token) expect(text).toMatch(/not allowed for this client/);
    if (code === 405 || code === 414) expect(text).toMatch(new RegExp(`HTTP ${code}`));
    // Hints name only what the command has.
    if (!c.argv.includes('batch')) expect(text).not.toMatch(/--resume/);
    const known = optionsOf(c.argv);
    // A whole command line quoted in a hint (`leadctl leads ids --date …`) names another command's options.
    const named = [...res.stderr.replace(/`leadctl [^`]*`/g, '').matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map(
      (m) => m[0],
    );
    expect(named.filter((o) => !known.has(o))).toEqual([]);
  });
});

describe.each(CASES)('$name, answered HTTP 200 with a captive portal page', (c) => {
  it('is no answer: retried like a 5xx (where safe), then exit 5 naming what came back', async () => {
    status = 200;
    portal = true;
    target = c.target;
    const requests = () => (c.token ? server.seen : server.api());
    const before = requests().filter(c.target).length;
    try {
      const res = await run(c.argv);
      const text = res.stdout + res.stderr;
      expect({ code: res.code, text }).toMatchObject({ code: 5 });
      expect(text).toMatch(/is not a well-formed answer of the service \(HTTP 200, content type text\/html/);
      expect(text).toMatch(/captive portal/);
      const sent = requests().filter(c.target).length - before;
      if (c.unsafe) expect(sent).toBe(1);
      else expect(sent % 2).toBe(0);
      if (c.records) expect(JSON.parse(res.stdout)).not.toMatchObject({ status: 'completed' });
    } finally {
      portal = false;
    }
  });
});

describe('loans push answered 409 for both loans', () => {
  it('rejects both loans as conflicts with the reason, in the rejects file (exit 4)', async () => {
    status = 409;
    target = (r) => r.path.endsWith('/loans');
    const res = await run(['loans', 'push', 'loans.json', '--rejects', 'conflicts.csv']);
    expect(res.code).toBe(4);
    const summary = JSON.parse(res.stdout);
    expect(summary.loans).toMatchObject({ read: 2, sent: 2, rejected: 2, not_sent: 0, accepted: 0 });
    const lines = readFileSync(join(work, 'conflicts.csv'), 'utf8').trim().split('\n');
    expect(lines).toHaveLength(3);
    expect(lines.slice(1).every((l) => /conflict \(HTTP 409\)/.test(l) && /already been taken/.test(l))).toBe(true);
  });
});

describe('error bodies in other shapes than the sandbox writes', () => {
  it.each([
    ['an empty body', undefined],
    ['plain text', 'Conflict'],
    ['a JSON array of errors', { errors: ['loan_id FL-1 belongs to another customer'] }],
  ])('loans push answered 409 with %s: each loan rejected with what the service said', async (_name, body) => {
    status = 200;
    target = () => false;
    const s = await startContractServer({
      answer: (req) =>
        req.path.endsWith('/loans')
          ? { status: 409, body, headers: typeof body === 'string' ? { 'content-type': 'text/plain' } : undefined }
          : undefined,
    });
    try {
      const io = memoryIO({
        cwd: work,
        env: {
          LEADCTL_BASE_URL: s.baseUrl,
          LEADCTL_CLIENT_ID: s.clientId,
          LEADCTL_CLIENT_SECRET: s.clientSecret,
          LEADCTL_CONFIG_DIR: join(work, 'config-shapes'),
          LEADCTL_STATE_DIR: join(work, 'state-shapes'),
        },
      });
      const code = await main(['-o', 'json', 'loans', 'push', 'loans.json', '--rejects', 'shapes.csv'], io);
      expect(code).toBe(4);
      expect(JSON.parse(io.stdoutText()).loans).toMatchObject({ sent: 2, rejected: 2, not_sent: 0 });
      const lines = readFileSync(join(work, 'shapes.csv'), 'utf8').trim().split('\n').slice(1);
      expect(lines).toHaveLength(2);
      for (const line of lines) expect(line).toMatch(/409/);
      if (typeof body === 'string') expect(lines[0]).toMatch(/Conflict/);
      if (body && typeof body === 'object') expect(lines[0]).toMatch(/belongs to another customer/);
    } finally {
      await s.close();
    }
  });
});
