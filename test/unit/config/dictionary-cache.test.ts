import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { dictionaryCachePath, loadDictionary } from '../../../src/config/dictionary-cache.js';

describe('dictionary cache', () => {
  const t0 = new Date('2024-01-05T10:00:00Z');
  const later = (hours: number) => new Date(t0.getTime() + hours * 3600_000);

  const roots: string[] = [];
  afterAll(() => roots.forEach((root) => rmSync(root, { recursive: true, force: true })));

  function setup() {
    const root = mkdtempSync(join(tmpdir(), 'dict-cache-'));
    roots.push(root);
    const dir = join(root, 'cache');
    let calls = 0;
    const fetch = async () => {
      calls++;
      return [{ id: 'm1', call: calls }];
    };
    return { dir, fetch, calls: () => calls };
  }

  it('fetches once, then serves the copy for a day', async () => {
    const s = setup();
    const opts = { dir: s.dir, profile: 'default', account: 'http://127.0.0.1:1 client-a' };
    const a = await loadDictionary({ ...opts, now: t0 }, s.fetch);
    expect(a.fromCache).toBe(false);
    const b = await loadDictionary({ ...opts, now: later(23) }, s.fetch);
    expect(b.fromCache).toBe(true);
    expect(b.entries).toEqual([{ id: 'm1', call: 1 }]);
    const c = await loadDictionary({ ...opts, now: later(25) }, s.fetch);
    expect(c.fromCache).toBe(false);
    expect(s.calls()).toBe(2);
    expect(statSync(dictionaryCachePath(s.dir, 'default')).mode & 0o777).toBe(0o600);
  });

  it('refetches on refresh, for another profile and for another account', async () => {
    const s = setup();
    const opts = { dir: s.dir, profile: 'default', account: 'http://127.0.0.1:1 client-a', now: t0 };
    await loadDictionary(opts, s.fetch);
    expect((await loadDictionary(opts, s.fetch, true)).fromCache).toBe(false);
    expect((await loadDictionary({ ...opts, profile: 'other' }, s.fetch)).fromCache).toBe(false);
    expect((await loadDictionary({ ...opts, account: 'http://127.0.0.1:1 client-b' }, s.fetch)).fromCache).toBe(false);
    expect(s.calls()).toBe(4);
  });

  it('treats a corrupt cache file as missing', async () => {
    const s = setup();
    const opts = { dir: s.dir, profile: 'p/1', account: 'x', now: t0 };
    await loadDictionary(opts, s.fetch);
    const path = dictionaryCachePath(s.dir, 'p/1');
    expect(path.endsWith('dictionary-p_1.json')).toBe(true);
    writeFileSync(path, '{not json');
    expect((await loadDictionary(opts, s.fetch)).fromCache).toBe(false);
    expect(JSON.parse(readFileSync(path, 'utf8')).data).toEqual([{ id: 'm1', call: 2 }]);
  });
});
