import { describe, expect, it } from 'vitest';
import { streamLeadIds, type LeadIdsProgress } from '../../../src/jobs/lead-ids.js';
import type { LeadIdsParams } from '../../../src/api/client.js';

/** A fake service holding ids 1..total, whose cursor is the next offset. */
function fakeService(total: number) {
  const calls: LeadIdsParams[] = [];
  return {
    calls,
    async leadIds(params: LeadIdsParams) {
      calls.push(params);
      const start = params.cursor ? Number(params.cursor) : 0;
      const size = params.per_page ?? 100;
      const data = Array.from({ length: Math.max(0, Math.min(size, total - start)) }, (_, i) => start + i + 1);
      const next = start + size < total ? String(start + size) : null;
      return {
        data,
        links: { first: null, last: null, prev: null, next: next ? `http://x/api?cursor=${next}` : null },
        meta: { path: 'http://x/api', per_page: size, next_cursor: next, prev_cursor: null },
      };
    },
  };
}

async function collect(api: ReturnType<typeof fakeService>, options: Parameters<typeof streamLeadIds>[1]) {
  const progress: LeadIdsProgress = { pages: 0, ids: 0 };
  const ids: number[] = [];
  for await (const page of streamLeadIds(api, options, progress)) ids.push(...page);
  return { ids, progress };
}

describe('streamLeadIds', () => {
  it('reads one page by default and reports where to continue', async () => {
    const api = fakeService(250);
    const { ids, progress } = await collect(api, { date: '2024-01-05' });
    expect(ids).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    expect(progress).toEqual({ pages: 1, ids: 100, nextCursor: '100' });
    expect(api.calls).toEqual([{ date: '2024-01-05', datetime: undefined, per_page: undefined, cursor: undefined }]);
  });

  it('follows the cursor to the end with all, leaving no cursor', async () => {
    const api = fakeService(250);
    const { ids, progress } = await collect(api, { all: true, perPage: 40 });
    expect(ids).toHaveLength(250);
    expect(new Set(ids).size).toBe(250);
    expect(progress.pages).toBe(7);
    expect(progress.nextCursor).toBeUndefined();
  });

  it('stops exactly at a limit, asking only for what is missing, so the cursor continues right after', async () => {
    const api = fakeService(250);
    const first = await collect(api, { limit: 130, perPage: 50 });
    expect(first.ids).toEqual(Array.from({ length: 130 }, (_, i) => i + 1));
    expect(api.calls.map((c) => c.per_page)).toEqual([50, 50, 30]);
    expect(first.progress.nextCursor).toBe('130');
    const rest = await collect(api, { all: true, perPage: 50, cursor: first.progress.nextCursor });
    expect(rest.ids[0]).toBe(131);
    expect([...first.ids, ...rest.ids]).toEqual(Array.from({ length: 250 }, (_, i) => i + 1));
  });

  it('takes the cursor from the next link when meta has none', async () => {
    const api = fakeService(30);
    const original = api.leadIds;
    api.leadIds = async (p) => {
      const page = await original(p);
      return { ...page, meta: { ...page.meta, next_cursor: null } };
    };
    const { ids } = await collect(api, { all: true, perPage: 10 });
    expect(ids).toHaveLength(30);
  });

  it('yields nothing for an empty day', async () => {
    const { ids, progress } = await collect(fakeService(0), { all: true });
    expect(ids).toEqual([]);
    expect(progress).toEqual({ pages: 1, ids: 0, nextCursor: undefined });
  });
});
