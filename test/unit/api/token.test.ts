import { describe, expect, it, vi } from 'vitest';
import { isFresh, TokenProvider, type CachedToken, type TokenCache } from '../../../src/api/token.js';

function memoryCache(initial?: CachedToken): TokenCache & { saved: CachedToken[]; cleared: number } {
  let current = initial;
  const saved: CachedToken[] = [];
  return {
    saved,
    cleared: 0,
    load: () => current,
    save(t) {
      current = t;
      saved.push(t);
    },
    clear() {
      current = undefined;
      this.cleared++;
    },
  };
}

describe('isFresh', () => {
  it('renews a minute early for long-lived tokens and a tenth of the life for short ones', () => {
    const hour = { accessToken: 'a', obtainedAt: 0, expiresAt: 3_600_000 };
    expect(isFresh(hour, 3_600_000 - 61_000)).toBe(true);
    expect(isFresh(hour, 3_600_000 - 59_000)).toBe(false);
    const twoSeconds = { accessToken: 'b', obtainedAt: 0, expiresAt: 2000 };
    expect(isFresh(twoSeconds, 1700)).toBe(true);
    expect(isFresh(twoSeconds, 1900)).toBe(false);
  });
});

describe('TokenProvider', () => {
  it('fetches once for concurrent callers and reuses the token', async () => {
    let n = 0;
    const fetchToken = vi.fn(async () => ({ accessToken: `t${++n}`, obtainedAt: 0, expiresAt: 3_600_000 }));
    const provider = new TokenProvider({ fetchToken, now: () => 1000 });
    const tokens = await Promise.all([provider.get(), provider.get(), provider.get()]);
    expect(tokens).toEqual(['t1', 't1', 't1']);
    expect(await provider.get()).toBe('t1');
    expect(fetchToken).toHaveBeenCalledTimes(1);
  });

  it('uses a fresh cached token without asking, and renews an expiring one', async () => {
    let now = 1000;
    const cache = memoryCache({ accessToken: 'cached', obtainedAt: 0, expiresAt: 3_600_000 });
    const fetchToken = vi.fn(async () => ({ accessToken: 'new', obtainedAt: now, expiresAt: now + 3_600_000 }));
    const provider = new TokenProvider({ fetchToken, cache, now: () => now });
    expect(await provider.get()).toBe('cached');
    expect(fetchToken).not.toHaveBeenCalled();
    now = 3_590_000;
    expect(await provider.get()).toBe('new');
    expect(cache.saved.map((t) => t.accessToken)).toEqual(['new']);
  });

  it('renews a refused token once even when several requests saw the 401', async () => {
    let n = 0;
    const fetchToken = vi.fn(async () => ({ accessToken: `t${++n}`, obtainedAt: 0, expiresAt: 3_600_000 }));
    const cache = memoryCache();
    const provider = new TokenProvider({ fetchToken, cache, now: () => 1000 });
    const first = await provider.get();
    const renewed = await Promise.all([provider.refused(first), provider.refused(first)]);
    expect(renewed).toEqual(['t2', 't2']);
    expect(await provider.refused(first)).toBe('t2');
    expect(fetchToken).toHaveBeenCalledTimes(2);
    expect(cache.cleared).toBe(1);
  });

  it('does not keep a failed fetch: the next call tries again', async () => {
    const fetchToken = vi
      .fn()
      .mockRejectedValueOnce(new Error('down'))
      .mockResolvedValueOnce({ accessToken: 'ok', obtainedAt: 0, expiresAt: 3_600_000 });
    const provider = new TokenProvider({ fetchToken, now: () => 0 });
    await expect(provider.get()).rejects.toThrow('down');
    expect(await provider.get()).toBe('ok');
  });

  it('treats an unreadable cache as empty', async () => {
    const cache: TokenCache = {
      load: () => {
        throw new Error('corrupt');
      },
      save: () => {
        throw new Error('read-only');
      },
      clear: () => {},
    };
    const provider = new TokenProvider({
      fetchToken: async () => ({ accessToken: 'x', obtainedAt: 0, expiresAt: 3_600_000 }),
      cache,
      now: () => 0,
    });
    expect(await provider.get()).toBe('x');
  });
});
