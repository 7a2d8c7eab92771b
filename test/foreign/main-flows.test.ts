import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startContractServer, type ContractServer } from '../helpers/contract-server.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';

/**
 * The foreign-server tier: the main flows, with the built binary, against a service that answers
 * only what the interface promises (test/helpers/contract-server.ts): lists only under
 * `list-manager`, batches answered `{}`, upserts without a body, Laravel error bodies. Nothing of
 * our sandbox's own reading of the interface helps here.
 */

const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-foreign-'));
let server: ContractServer;
let env: Record<string, string>;

beforeAll(async () => {
  server = await startContractServer({ listsPrefix: 'list-manager', leadIds: [101, 102, 103, 104, 105] });
  env = { LEADCTL_CONFIG_DIR: join(work, 'config'), LEADCTL_STATE_DIR: join(work, 'state'), HOME: work };
  writeFileSync(join(work, 'ssn.csv'), 'ssn\n345-67-8901\n456-78-9012\n');
  writeFileSync(join(work, 'ssn2.csv'), 'ssn\n567-89-0123\n');
  await writeExport({
    out: join(work, 'export'),
    customers: 25,
    seed: 4,
    paymentsPerCustomer: 2,
    shapes: ['denormalised'],
  });
});
afterAll(async () => {
  await server.close();
  rmSync(work, { recursive: true, force: true });
});

const run = (args: string[], input?: string) => runBinary(args, { env, input, cwd: work });

describe('main flows against a contract-only service (built binary)', () => {
  it('auth login: checks the secret and saves the profile', async () => {
    const res = await run(
      ['auth', 'login', '--base-url', server.baseUrl, '--client-id', server.clientId, '--client-secret-stdin'],
      server.clientSecret + '\n',
    );
    expect(res.code, res.stderr).toBe(0);
    expect(server.tokens()).toBeGreaterThan(0);
    const status = await run(['auth', 'status', '-o', 'json']);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).not.toContain(server.clientSecret);
  });

  it('lists create / ls / get / update: found under list-manager, then straight there', async () => {
    const created = await run([
      'lists',
      'create',
      'ssn.csv',
      '--name',
      'Do not buy',
      '--type',
      'ssn',
      '-o',
      'json',
      '--verbose',
    ]);
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ list_id: 1, uploaded: 2 });
    expect(created.stderr).toMatch(/no lists route at \/api\/v1\/lead-management\/lists/);
    expect(server.lists.get(1)?.items).toEqual(['345678901', '456789012']);

    const before = server.api().filter((r) => r.path.startsWith('/api/v1/lead-management')).length;
    const ls = await run(['lists', 'ls', '-o', 'json']);
    expect(ls.code, ls.stderr).toBe(0);
    expect(JSON.parse(ls.stdout)).toMatchObject([{ id: 1, name: 'Do not buy' }]);
    const got = await run(['lists', 'get', '1', '-o', 'json']);
    expect(got.code, got.stderr).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ id: 1, name: 'Do not buy' });
    const updated = await run(['lists', 'update', '1', 'ssn2.csv', '--yes', '--max-removed', '100%', '-o', 'json']);
    expect(updated.code, updated.stderr).toBe(0);
    expect(server.lists.get(1)?.items).toEqual(['567890123']);
    expect(server.api().filter((r) => r.path.startsWith('/api/v1/lead-management')).length).toBe(before);

    const missing = await run(['lists', 'get', '99']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/list 99 was not found/);
  });

  it('customers batch: a batch answered {} counts every record unconfirmed, none accepted', async () => {
    const res = await run([
      'customers',
      'batch',
      'export/export.csv',
      '--mapping',
      join(FIXTURES, 'lms', 'mapping.json'),
      '--chunk-size',
      '10',
      '-o',
      'json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    const summary = JSON.parse(res.stdout);
    expect(summary.status).toBe('completed');
    expect(summary.customers).toMatchObject({
      read: 25,
      sent: 25,
      accepted: 0,
      unconfirmed: 25,
      rejected: 0,
      not_sent: 0,
    });
    expect(summary.loans.unconfirmed).toBe(summary.loans.sent);
    expect(summary.payments.unconfirmed).toBe(summary.payments.sent);
    expect(summary.payments.accepted).toBe(0);
    expect(summary.requests).toMatchObject({ total: 3, sent: 3 });
    expect(server.batches).toHaveLength(3);
    const table = await run([
      'customers',
      'batch',
      'export/export.csv',
      '--mapping',
      join(FIXTURES, 'lms', 'mapping.json'),
      '-o',
      'table',
    ]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).not.toMatch(/everything was accepted/);
    expect(table.stdout).toMatch(/unconfirmed/);
  });

  it('customers batch --changed-only: batches answered {} are acknowledged, so the same export sends nothing next time', async () => {
    const args = [
      'customers',
      'batch',
      'export/export.csv',
      '--mapping',
      join(FIXTURES, 'lms', 'mapping.json'),
      '--chunk-size',
      '10',
      '--changed-only',
      '-o',
      'json',
    ];
    const first = await run(args);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).customers).toMatchObject({ sent: 25, unconfirmed: 25, unchanged: 0 });
    const before = server.batches.length;
    const second = await run(args);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout).customers).toMatchObject({ read: 25, sent: 0, unchanged: 25 });
    expect(server.batches).toHaveLength(before);
  });

  it('lists diff: the list uploaded above is known, so what an update changes is counted', async () => {
    const res = await run(['lists', 'diff', '1', 'ssn.csv', '-o', 'json']);
    expect(res.code, res.stderr).toBe(0);
    expect(JSON.parse(res.stdout)).toMatchObject({ added: 2, removed: 1, unchanged: 0 });
  });

  it('customers, loans and payments push: one upsert each, answered without a body', async () => {
    const customer = {
      customer_id: 'F-1',
      lead_loan: {
        loan_id: 'FL-1',
        lead_id: 500101,
        loan_amount: 50000,
        applied_at: '2026-03-06T16:15:00Z',
        loan_status: 'current',
      },
    };
    const c = await run(['customers', 'push', '-', '-o', 'json'], JSON.stringify(customer));
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout).customers).toMatchObject({ read: 1, accepted: 1 });
    const loans = [
      {
        customer_id: 'F-1',
        loan_id: 'FL-2',
        lead_id: 500102,
        loan_amount: 30000,
        applied_at: '2026-04-06T16:15:00Z',
        loan_status: 'current',
      },
      {
        customer_id: 'NOBODY',
        loan_id: 'FL-3',
        lead_id: 500103,
        loan_amount: 30000,
        applied_at: '2026-04-06T16:15:00Z',
        loan_status: 'current',
      },
    ];
    const l = await run(['loans', 'push', '-', '--rejects', 'loan-rejects.csv', '-o', 'json'], JSON.stringify(loans));
    expect(l.code, l.stderr).toBe(4);
    expect(JSON.parse(l.stdout).loans).toMatchObject({ read: 2, sent: 2, accepted: 1, rejected: 1 });
    expect(readFileSync(join(work, 'loan-rejects.csv'), 'utf8')).toMatch(/does not know customer NOBODY \(HTTP 404\)/);
    const payment = {
      customer_id: 'F-1',
      loan_id: 'FL-2',
      lead_id: 500102,
      payment_id: 'FP-1',
      payment_amount: 1000,
      payment_status: 'paid',
      payment_at: '2026-05-01T15:00:00Z',
    };
    const p = await run(['payments', 'push', '-', '-o', 'json'], JSON.stringify(payment));
    expect(p.code, p.stderr).toBe(0);
    expect(JSON.parse(p.stdout).payments).toMatchObject({ read: 1, accepted: 1 });
  });

  it('leads ids --all and leads get', async () => {
    const ids = await run(['leads', 'ids', '--date', '2026-01-05', '--per-page', '2', '--all', '-o', 'ndjson']);
    expect(ids.code, ids.stderr).toBe(0);
    expect(
      ids.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).lead_id),
    ).toEqual([101, 102, 103, 104, 105]);
    expect(ids.stderr).toMatch(/page 1 received/);
    const lead = await run(['leads', 'get', '102', '--map-ids', 'm2', '-o', 'json']);
    expect(lead.code, lead.stderr).toBe(0);
    expect(lead.stdout).toContain('10102');
  });

  it('dry-run passes', async () => {
    const pass = await run(['dry-run', '--ssn', '345678901', '-o', 'json']);
    expect(pass.code, pass.stderr).toBe(0);
    expect(JSON.parse(pass.stdout)).toMatchObject({ pass: true });
  });

  it('legacy post: the envelope is read as the interface writes it', async () => {
    const res = await run([
      'legacy',
      'post',
      join(FIXTURES, 'legacy', 'accepted.json'),
      '--api-key',
      'campaign-key-1',
      '-o',
      'json',
    ]);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/example\.invalid\/r\/1/);
  });
});
