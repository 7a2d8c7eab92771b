import { PassThrough } from 'node:stream';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { exportLeads } from '../../../src/jobs/leads-export.js';
import { exportToFile } from '../../../src/ingest/table/writer.js';
import { AuthError, NotFoundError, ServiceError } from '../../../src/errors.js';
import type { DictionaryEntry } from '../../../src/ingest/leads/columns.js';

const columns: DictionaryEntry[] = [
  { id: 'm1', category: 'Lead', subcategory: 'Internal', name: 'Lead ID', column: 'lead_id', type: 'Number' },
  { id: 'm3', category: 'Applicant', subcategory: 'Contact', name: 'Email', column: 'email', type: 'String' },
  { id: 'm4', category: 'Lead', subcategory: 'Internal', name: 'Is Accepted', column: 'is_accepted', type: 'Boolean' },
];

function fakeApi(ids: number[], behaviour: (id: number, attempt: number) => Record<string, unknown> | Error) {
  const attempts = new Map<number, number>();
  return {
    attempts,
    async leadIds() {
      return {
        data: ids,
        links: { first: null, last: null, prev: null, next: null },
        meta: { path: '', per_page: 100, next_cursor: null, prev_cursor: null },
      };
    },
    async lead(id: number | string) {
      const n = (attempts.get(Number(id)) ?? 0) + 1;
      attempts.set(Number(id), n);
      // Later ids answer sooner, so order must come from the job, not from arrival.
      await new Promise((r) => setTimeout(r, (10 - (Number(id) % 10)) * 2));
      const out = behaviour(Number(id), n);
      if (out instanceof Error) throw out;
      return out;
    },
  };
}

async function run(api: ReturnType<typeof fakeApi>, retries = 2) {
  const out = new PassThrough();
  const chunks: string[] = [];
  out.on('data', (c) => chunks.push(String(c)));
  const result = await exportLeads(api, { date: '2024-01-05', columns, concurrency: 4, retries, retryDelayMs: 1 }, out);
  return { result, csv: chunks.join('') };
}

describe('exportLeads', () => {
  it('tells the ids listed page by page, then how many leads it fetches', async () => {
    const api = fakeApi([1, 2, 3], (id) => ({ m1: id }));
    const events: unknown[] = [];
    await exportLeads(
      api,
      { date: '2024-01-05', columns, concurrency: 1, retries: 0 },
      new PassThrough().resume(),
      (e) => events.push(e),
    );
    expect(events.slice(0, 2)).toEqual([
      { type: 'listing', ids: 3 },
      { type: 'ids', total: 3 },
    ]);
  });

  it('writes a header of column names and one row per lead in id order', async () => {
    const api = fakeApi([1, 2, 3, 4, 5, 6], (id) => ({ m1: id, m3: `u${id}@example.com`, m4: id % 2 === 0, m9: 'x' }));
    const { result, csv } = await run(api);
    expect(result).toEqual({ ids: 6, exported: 6, missing: [], missingExitCode: 0 });
    expect(csv.trim().split('\n')).toEqual([
      'lead_id,email,is_accepted',
      '1,u1@example.com,false',
      '2,u2@example.com,true',
      '3,u3@example.com,false',
      '4,u4@example.com,true',
      '5,u5@example.com,false',
      '6,u6@example.com,true',
    ]);
  });

  it('retries a failing lead and keeps its place when it comes back', async () => {
    const api = fakeApi([1, 2, 3], (id, attempt) =>
      id === 2 && attempt < 3 ? new ServiceError('HTTP 503', 503) : { m1: id },
    );
    const { result, csv } = await run(api);
    expect(api.attempts.get(2)).toBe(3);
    expect(result.missing).toEqual([]);
    expect(csv.trim().split('\n').slice(1)).toEqual(['1,,', '2,,', '3,,']);
  });

  it('lists a lead that still fails after the retries, with its reason, and exports the rest', async () => {
    const api = fakeApi([1, 2, 3], (id) =>
      id === 3 ? new NotFoundError('not found: GET /leads/3 (HTTP 404)') : { m1: id, m3: null },
    );
    const { result, csv } = await run(api, 1);
    expect(result.exported).toBe(2);
    expect(result.missing).toEqual([{ lead_id: 3, attempts: 2, reason: 'not found: GET /leads/3 (HTTP 404)' }]);
    expect(result.missingExitCode).toBe(4);
    expect(csv.trim().split('\n')).toEqual(['lead_id,email,is_accepted', '1,,', '2,,']);
  });

  it('stops at once on an authentication failure', async () => {
    const api = fakeApi([1, 2], () => new AuthError('refused'));
    await expect(run(api)).rejects.toBeInstanceOf(AuthError);
    expect(api.attempts.get(1)).toBe(1);
  });
});

describe('exportToFile', () => {
  it('renames the temporary file when complete, and removes it on failure', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'export-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'out.csv');
    await exportToFile(path, async (out) => {
      out.write('a,b\n');
    });
    expect(readFileSync(path, 'utf8')).toBe('a,b\n');
    expect(readdirSync(dir)).toEqual(['out.csv']);
    const failed = join(dir, 'failed.csv');
    await expect(
      exportToFile(failed, async (out) => {
        out.write('x\n');
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    expect(existsSync(failed)).toBe(false);
    expect(readdirSync(dir)).toEqual(['out.csv']);
  });
});
