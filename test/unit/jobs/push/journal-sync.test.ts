import * as fs from 'node:fs';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Journal } from '../../../../src/jobs/push/journal.js';

// The journal's calls to fsync are counted (the real one still runs).
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof fs>();
  return { ...real, fsyncSync: vi.fn(real.fsyncSync) };
});

const work = mkdtempSync(join(tmpdir(), 'leadctl-journal-sync-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const now = new Date('2026-11-20T08:09:10.123Z');
const header = {
  key: 'k1',
  profile: 'default',
  base_url: 'http://127.0.0.1:1',
  inputs: ['auto:x.csv'],
  settings: { maxCustomers: 1000, maxBytes: 8 },
};
const ack = (chunk: number) => ({ chunk, first: 'A', last: 'B', customers: 2, skipped: [], at: now.toISOString() });

describe('the journal on disk', () => {
  it('writes every entry at once, syncs them to the disk at most about once a second, and at the end', () => {
    const fsync = vi.mocked(fs.fsyncSync);
    const { journal } = Journal.open(join(work, 'state'), header, false, now);
    fsync.mockClear();
    for (let chunk = 1; chunk <= 200; chunk++) journal.record(ack(chunk));
    // All written for any reader (a crash of the process loses none)...
    expect(readFileSync(journal.path, 'utf8').trimEnd().split('\n')).toHaveLength(201);
    // ...not each synced on its own.
    expect(fsync.mock.calls.length).toBeGreaterThanOrEqual(1);
    expect(fsync.mock.calls.length).toBeLessThan(10);
    const before = fsync.mock.calls.length;
    journal.markComplete(now);
    expect(fsync.mock.calls.length).toBe(before + 1);
    // Nothing left unsynced: closing syncs nothing more.
    journal.close();
    expect(fsync.mock.calls.length).toBe(before + 1);

    const again = Journal.open(join(work, 'state'), header, true, now).journal;
    again.record(ack(201));
    fsync.mockClear();
    again.record(ack(202));
    again.close();
    // What was written after the last sync is synced before the file is closed.
    expect(fsync).toHaveBeenCalled();
    expect(readFileSync(again.path, 'utf8').trimEnd().split('\n')).toHaveLength(204);
  });
});
