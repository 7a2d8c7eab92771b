import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { validLead } from '../contract/support.js';
// @ts-expect-error plain JS generator shared with the benchmark
import { writeExport } from '../../fixtures/lms/generate.mjs';

/**
 * The same flows against `leadctl sandbox start --minimal` (the interface's promises only: lists
 * under list-manager alone, batches answered {}, upserts without a body, no lead_id in legacy
 * answers) and against `--lists-prefix lead-management`: the CLI must work with either.
 */
const FIXTURES = fileURLToPath(new URL('../../fixtures/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'leadctl-minimal-'));
beforeAll(async () => {
  writeFileSync(join(work, 'ssn.csv'), 'ssn\n345-67-8901\n456-78-9012\n');
  await writeExport({
    out: join(work, 'export'),
    customers: 20,
    seed: 8,
    paymentsPerCustomer: 2,
    shapes: ['denormalised'],
  });
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

function envFor(sb: TestSandbox, name: string): Record<string, string> {
  return {
    HOME: work,
    LEADCTL_CONFIG_DIR: join(work, name, 'config'),
    LEADCTL_STATE_DIR: join(work, name, 'state'),
    LEADCTL_BASE_URL: sb.baseUrl,
    LEADCTL_CLIENT_ID: sb.clientId,
    LEADCTL_CLIENT_SECRET: sb.clientSecret,
  };
}

describe('sandbox start --minimal (built binary on both sides)', () => {
  let sb: TestSandbox;
  let env: Record<string, string>;
  beforeAll(async () => {
    sb = await startSandboxProcess(['--minimal', '--public-url', 'https://sandbox.example.test']);
    env = envFor(sb, 'minimal');
  });
  afterAll(async () => sb?.stop());
  const run = (args: string[]) => runBinary(args, { env, cwd: work });

  it('serves lists only under list-manager, and every list command finds them there', async () => {
    const direct = await fetch(`${sb.baseUrl}/api/v1/lead-management/lists`);
    expect(direct.status).toBe(404);
    const created = await run(['lists', 'create', 'ssn.csv', '--name', 'Minimal', '--type', 'ssn', '-o', 'json']);
    expect(created.code, created.stderr).toBe(0);
    const id = JSON.parse(created.stdout).list_id;
    expect((await run(['lists', 'ls', '-o', 'json'])).code).toBe(0);
    expect((await run(['lists', 'get', String(id), '-o', 'json'])).code).toBe(0);
    const updated = await run(['lists', 'update', String(id), 'ssn.csv', '--yes', '-o', 'json']);
    expect(updated.code, updated.stderr).toBe(0);
  });

  it('a batch answered {} counts its records unconfirmed, never accepted', async () => {
    const res = await run([
      'customers',
      'batch',
      join(work, 'export', 'export.csv'),
      '--mapping',
      join(FIXTURES, 'lms', 'mapping.json'),
      '-o',
      'json',
    ]);
    expect([0, 4]).toContain(res.code);
    const summary = JSON.parse(res.stdout);
    expect(summary.customers.accepted).toBe(0);
    expect(summary.customers.unconfirmed).toBe(summary.customers.sent);
    expect(summary.customers.sent).toBeGreaterThan(0);
    expect(summary.accounting.balanced).toBe(true);
  });

  it('legacy answers carry no lead_id, and redirect_url is built from --public-url, never from Host', async () => {
    const res = await fetch(`${sb.baseUrl}/api/legacy`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', host: 'evil.example' },
      body: JSON.stringify(validLead(sb.campaigns[0]!.api_key)),
    });
    const answer = (await res.json()) as Record<string, unknown>;
    expect(answer.lead_id).toBeUndefined();
    expect(answer).toMatchObject({ status: 'OK', result: 'A' });
    expect(String(answer.redirect_url)).toMatch(/^https:\/\/sandbox\.example\.test\/redirect\//);
  });
});

describe('sandbox start --lists-prefix lead-management', () => {
  it('serves lists only there, and the CLI uses it without falling back', async () => {
    const sb = await startSandboxProcess(['--lists-prefix', 'lead-management']);
    try {
      const env = envFor(sb, 'lead-management');
      expect((await fetch(`${sb.baseUrl}/api/v1/list-manager/lists`)).status).toBe(404);
      const created = await runBinary(['lists', 'create', 'ssn.csv', '--name', 'LM', '--type', 'ssn', '-o', 'json'], {
        env,
        cwd: work,
      });
      expect(created.code, created.stderr).toBe(0);
      const stats = await sb.stats();
      expect(stats.requests.by_route['POST /api/v1/lead-management/lists']).toBe(1);
    } finally {
      await sb.stop();
    }
  });
});
