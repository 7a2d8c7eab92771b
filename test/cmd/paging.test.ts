import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { startContractServer, type ContractServer, type ContractServerOptions } from '../helpers/contract-server.js';
import { memoryIO } from '../helpers/memory-io.js';

/** Bounded, honest paging: a service whose pages loop or repeat ends the run, with no duplicates printed. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-paging-'));
const servers: ContractServer[] = [];
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  rmSync(work, { recursive: true, force: true });
});

async function run(options: ContractServerOptions, argv: string[]) {
  const s = await startContractServer(options);
  servers.push(s);
  const io = memoryIO({
    cwd: work,
    env: {
      LEADCTL_BASE_URL: s.baseUrl,
      LEADCTL_CLIENT_ID: s.clientId,
      LEADCTL_CLIENT_SECRET: s.clientSecret,
      LEADCTL_CONFIG_DIR: join(work, 'config'),
      LEADCTL_STATE_DIR: join(work, 'state'),
    },
  });
  const code = await main(argv, io);
  return { code, stdout: io.stdoutText(), stderr: io.stderrText(), server: s };
}

type Pages = Record<string, { data: number[]; next: string | null }>;
const scripted = (pages: Pages): ContractServerOptions => ({ leadIdsPage: (cursor) => pages[cursor ?? ''] });
const printed = (stdout: string) => stdout.trim().split('\n').filter(Boolean).map(Number);

describe('leads ids --all against a service whose cursor misbehaves', () => {
  it.each<[string, Pages, number[]]>([
    ['a cursor that repeats itself', { '': { data: [1, 2], next: 'a' }, a: { data: [3, 4], next: 'a' } }, [1, 2]],
    [
      'cursors in a cycle',
      { '': { data: [1, 2], next: 'a' }, a: { data: [3, 4], next: 'b' }, b: { data: [5, 6], next: 'a' } },
      [1, 2, 3, 4],
    ],
    [
      'a page of ids already sent',
      { '': { data: [1, 2], next: 'a' }, a: { data: [2, 3], next: 'b' }, b: { data: [], next: null } },
      [1, 2],
    ],
    ['an id twice in one page', { '': { data: [1, 1], next: null } }, []],
  ])('%s: non-zero exit, a clear error, and no duplicate on stdout', async (_name, pages, expected) => {
    const res = await run(scripted(pages), ['-o', 'ndjson', 'leads', 'ids', '--date', '2026-01-05', '--all']);
    expect(res.code).toBe(5);
    const ids = res.stdout
      .trim()
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l).lead_id as number);
    expect(ids).toEqual(expected);
    expect(new Set(ids).size).toBe(ids.length);
    expect(res.stderr).toMatch(/Error: page \d of lead ids (points back to a cursor already followed|repeats \d+)/);
    expect(res.stderr).not.toMatch(/resume with --cursor/);
    // The run ends: no request after the bad page.
    expect(res.server.api().filter((r) => r.path.endsWith('/lead-ids')).length).toBeLessThanOrEqual(3);
  });

  it('a page of ids that ends normally prints every id once, with progress per page on stderr', async () => {
    const res = await run(scripted({ '': { data: [1, 2], next: 'a' }, a: { data: [3], next: null } }), [
      '-o',
      'table',
      'leads',
      'ids',
      '--date',
      '2026-01-05',
      '--all',
    ]);
    expect(res.code).toBe(0);
    expect(printed(res.stdout)).toEqual([1, 2, 3]);
    expect(res.stderr).toMatch(/lead ids: page 1 received, 2 ids so far/);
  });

  it('the cursor a run starts from cannot come back either', async () => {
    const res = await run(scripted({ s: { data: [7], next: 's' } }), [
      '-o',
      'table',
      'leads',
      'ids',
      '--date',
      '2026-01-05',
      '--all',
      '--cursor',
      's',
    ]);
    expect(res.code).toBe(5);
    expect(printed(res.stdout)).toEqual([]);
  });
});

describe('lists ls --all against a service whose pages misbehave', () => {
  const list = (id: number) => ({
    id,
    name: `l${id}`,
    type: 'ZIP Codes',
    deleted_at: null,
    created_at: '2026-01-01T00:00:00.000000Z',
    updated_at: '2026-01-01T00:00:00.000000Z',
  });

  it('a page count of 21 million ends the run at once (exit 5), without following it', async () => {
    const res = await run({ listsPage: () => ({ data: [list(1)], last_page: 21_000_000, total: 21_000_000 }) }, [
      '-o',
      'json',
      'lists',
      'ls',
      '--all',
    ]);
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/reports 21,000,000 pages of lists, more than the 1,000/);
    expect(res.server.api().filter((r) => r.path.endsWith('/lists'))).toHaveLength(2); // the documented prefix is missing there, then page 1
    expect(res.stdout).not.toMatch(/"id":1/);
  });

  it('pages that repeat the same lists end the run with nothing printed twice', async () => {
    const res = await run({ listsPage: () => ({ data: [list(1), list(2)], last_page: 3, total: 6 }) }, [
      '-o',
      'json',
      'lists',
      'ls',
      '--all',
    ]);
    expect(res.code).toBe(5);
    expect(res.stderr).toMatch(/page 2 of lists repeats 1/);
  });

  it('honest pages are all followed, with progress per page', async () => {
    const res = await run({ listsPage: (page) => ({ data: [list(page)], last_page: 3, total: 3 }) }, [
      '-o',
      'json',
      'lists',
      'ls',
      '--all',
    ]);
    expect(res.code).toBe(0);
    expect(JSON.parse(res.stdout).map((l: { id: number }) => l.id)).toEqual([1, 2, 3]);
    expect(res.stderr).toMatch(/lists: page 1 of 3 received/);
  });
});
