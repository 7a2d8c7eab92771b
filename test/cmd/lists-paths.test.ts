import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startContractServer, type ContractServer } from '../helpers/contract-server.js';
import { memoryIO } from '../helpers/memory-io.js';

/** Every list command against a service that serves lists under only one of the two documented prefixes. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-lists-paths-'));
const servers: ContractServer[] = [];
beforeAll(() => {
  writeFileSync(join(work, 'ssn.csv'), 'ssn\n345678901\n456789012\n');
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(work, { recursive: true, force: true });
});

async function run(s: ContractServer, argv: string[], state: string) {
  const io = memoryIO({
    cwd: work,
    env: {
      LEADCTL_BASE_URL: s.baseUrl,
      LEADCTL_CLIENT_ID: s.clientId,
      LEADCTL_CLIENT_SECRET: s.clientSecret,
      LEADCTL_CONFIG_DIR: join(work, 'config'),
      LEADCTL_STATE_DIR: join(work, state),
    },
  });
  const code = await main(['-o', 'json', ...argv], io);
  return { code, stdout: io.stdoutText(), stderr: io.stderrText() };
}

describe.each(['list-manager', 'lead-management'] as const)('lists served only under /api/v1/%s/lists', (prefix) => {
  it('create, ls, get and update all work, and the working prefix is remembered', async () => {
    const s = await startContractServer({ listsPrefix: prefix });
    servers.push(s);
    const state = `state-${prefix}`;
    const created = await run(s, ['lists', 'create', 'ssn.csv', '--name', 'Do not buy', '--type', 'ssn'], state);
    expect(created.code).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ list_id: 1, uploaded: 2 });
    expect(s.lists.get(1)?.items).toHaveLength(2);

    const ls = await run(s, ['lists', 'ls'], state);
    expect(ls.code).toBe(0);
    expect(JSON.parse(ls.stdout)).toMatchObject([{ id: 1, name: 'Do not buy' }]);
    const got = await run(s, ['lists', 'get', '1'], state);
    expect(got.code).toBe(0);
    expect(JSON.parse(got.stdout)).toMatchObject({ id: 1 });
    const updated = await run(s, ['lists', 'update', '1', 'ssn.csv', '--yes'], state);
    expect(updated.code).toBe(0);
    const all = await run(s, ['lists', 'ls', '--all'], state);
    expect(JSON.parse(all.stdout)).toHaveLength(1);

    const remembered = JSON.parse(readFileSync(join(work, state, 'lists-paths.json'), 'utf8'));
    expect(Object.values(remembered)).toEqual([`/api/v1/${prefix}/lists`]);
    // Once found, the other prefix is not asked again.
    const wrong = prefix === 'list-manager' ? '/api/v1/lead-management/lists' : '/api/v1/list-manager/lists';
    const before = s.api().filter((r) => r.path.startsWith(wrong)).length;
    await run(s, ['lists', 'get', '1'], state);
    expect(s.api().filter((r) => r.path.startsWith(wrong)).length).toBe(before);
  });

  it('an unknown list is named as such (exit 2), not mistaken for a missing route', async () => {
    const s = await startContractServer({ listsPrefix: prefix });
    servers.push(s);
    const res = await run(s, ['lists', 'get', '999'], `state-unknown-${prefix}`);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/list 999 was not found/);
    const update = await run(
      s,
      ['lists', 'update', '999', 'ssn.csv', '--name', 'x', '--type', 'ssn', '--yes'],
      `state-unknown-${prefix}`,
    );
    expect(update.code).toBe(2);
    expect(update.stderr).toMatch(/list 999 was not found/);
  });
});

describe('--lists-path', () => {
  it('sends lists requests there and nowhere else', async () => {
    const s = await startContractServer({ listsPrefix: 'list-manager' });
    servers.push(s);
    const res = await run(s, ['--lists-path', '/api/v1/list-manager/lists', 'lists', 'ls'], 'state-override');
    expect(res.code).toBe(0);
    expect(s.api().map((r) => r.path)).toEqual(['/api/v1/list-manager/lists']);
  });

  it('a wrong one is a clear exit 2 naming the path, with no fallback', async () => {
    const s = await startContractServer({ listsPrefix: 'list-manager' });
    servers.push(s);
    const res = await run(s, ['--lists-path', '/api/v2/lists', 'lists', 'ls'], 'state-override-wrong');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/has no GET \/api\/v2\/lists/);
    expect(s.api()).toHaveLength(1);
  });

  it('refuses what is not a path', async () => {
    const s = await startContractServer({});
    servers.push(s);
    const res = await run(s, ['--lists-path', 'https://elsewhere.example/lists', 'lists', 'ls'], 'state-override-bad');
    expect(res.code).toBe(2);
    expect(s.api()).toHaveLength(0);
  });
});

describe('a service with lists under neither prefix', () => {
  it('says so and points at --lists-path (exit 2)', async () => {
    const s = await startContractServer({
      answer: (req) => (req.path.includes('/lists') ? { status: 404, body: { message: 'Not Found' } } : undefined),
    });
    servers.push(s);
    const res = await run(s, ['lists', 'ls'], 'state-neither');
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(
      /serves no lists under \/api\/v1\/lead-management\/lists or \/api\/v1\/list-manager\/lists/,
    );
    expect(res.stderr).toMatch(/--lists-path/);
  });
});
