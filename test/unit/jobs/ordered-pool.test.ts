import { describe, expect, it } from 'vitest';
import { mapOrdered } from '../../../src/jobs/ordered-pool.js';

const delay = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('mapOrdered', () => {
  it('yields results in input order even when later items finish first', async () => {
    const out: number[] = [];
    for await (const r of mapOrdered([30, 5, 20, 1, 10], 3, async (ms, i) => {
      await delay(ms);
      return i;
    }))
      out.push(r);
    expect(out).toEqual([0, 1, 2, 3, 4]);
  });

  it('never runs more than the concurrency at once, and runs that many when it can', async () => {
    let active = 0;
    let peak = 0;
    const results: number[] = [];
    for await (const r of mapOrdered(
      Array.from({ length: 20 }, (_, i) => i),
      4,
      async (n) => {
        active++;
        peak = Math.max(peak, active);
        await delay(2);
        active--;
        return n * 2;
      },
    ))
      results.push(r);
    expect(peak).toBe(4);
    expect(results).toEqual(Array.from({ length: 20 }, (_, i) => i * 2));
  });

  it('reads an async source lazily, within the window', async () => {
    let pulled = 0;
    async function* source() {
      for (let i = 0; i < 100; i++) {
        pulled++;
        yield i;
      }
    }
    const it = mapOrdered(source(), 2, async (n) => n, 8);
    const first = await it.next();
    expect(first.value).toBe(0);
    expect(pulled).toBeLessThanOrEqual(9);
    await it.return(undefined);
  });

  it('rethrows a failure when its turn comes', async () => {
    const run = async () => {
      for await (const _ of mapOrdered([1, 2, 3], 2, async (n) => {
        if (n === 2) throw new Error('boom');
        return n;
      }))
        void _;
    };
    await expect(run()).rejects.toThrow('boom');
  });
});
