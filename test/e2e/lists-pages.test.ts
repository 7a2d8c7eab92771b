import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEnv, type Env } from './service-env.js';

// The sandbox pages lists by 250 (the contract's sample): 263 lists make two pages.
const LISTS = 263;
let env: Env;
const run = (args: string[]) => env.run(args);

beforeAll(async () => {
  env = await startEnv();
  const sandbox = env.sandbox;
  // Set up through the API directly: this file is about reading pages, not uploading.
  const token = await fetch(`${sandbox.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sandbox.clientId,
      client_secret: sandbox.clientSecret,
    }),
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  for (let i = 1; i <= LISTS; i++) {
    const res = await fetch(`${sandbox.baseUrl}/api/v1/lead-management/lists`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json',
      },
      body: JSON.stringify({ name: `List ${i}`, type: 'ZIP Codes', list: [String(10000 + i)] }),
    });
    if (res.status !== 201) throw new Error(`creating list ${i} answered ${res.status}`);
  }
});

afterAll(async () => {
  await env?.stop();
});

describe('lists ls', () => {
  it('--all follows every page', async () => {
    const r = await run(['lists', 'ls', '--all']);
    expect(r.code).toBe(0);
    const lists = JSON.parse(r.stdout) as Array<{ id: number; name: string; archived: boolean }>;
    expect(lists).toHaveLength(LISTS);
    expect(new Set(lists.map((l) => l.id)).size).toBe(LISTS);
    expect(lists.map((l) => l.name)).toContain('List 1');
    expect(lists.map((l) => l.name)).toContain(`List ${LISTS}`);
    expect(lists.every((l) => l.archived === false)).toBe(true);
  });

  it('shows one page by default and says there are more', async () => {
    const r = await run(['lists', 'ls']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(250);
    expect(r.stderr).toContain(`Page 1 of 2 (${LISTS} lists); --page 2 for the next, --all for every page`);
  });

  it('--page 2 gives the rest', async () => {
    const r = await run(['lists', 'ls', '--page', '2']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toHaveLength(LISTS - 250);
  });

  it('--all in ndjson and csv: one record per list', async () => {
    const ndjson = await run(['-o', 'ndjson', 'lists', 'ls', '--all']);
    expect(ndjson.stdout.trim().split('\n')).toHaveLength(LISTS);
    const csv = await run(['-o', 'csv', 'lists', 'ls', '--all']);
    const lines = csv.stdout.trim().split('\n');
    expect(lines[0]).toBe('id,name,type,archived,created_at,updated_at');
    expect(lines).toHaveLength(LISTS + 1);
  });

  it('a table with the columns people need', async () => {
    const r = await run(['-o', 'table', 'lists', 'ls', '--page', '2']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/│\s+id\s+│ name\s+│ type\s+│ archived │ created\s+│ updated\s+│/);
    expect(r.stdout).toContain(`List ${LISTS}`);
  });

  it('refuses --page with --all, and a page that is not a number', async () => {
    expect((await run(['lists', 'ls', '--all', '--page', '2'])).code).toBe(2);
    const bad = await run(['lists', 'ls', '--page', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--page takes a page number from 1');
  });
});
