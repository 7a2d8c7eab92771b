import { describe, expect, it, vi } from 'vitest';
import { isFresh, TokenProvider, type CachedToken, type TokenCache, type TokenEvent } from '../../../src/api/token.js';

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

  it('renewNow: a new token wins over the cached one; when the endpoint is down, the cached one is still there', async () => {
    const cached = { accessToken: 'old', obtainedAt: 0, expiresAt: 3_600_000 };
    const up = new TokenProvider({
      fetchToken: async () => ({ accessToken: 'new', obtainedAt: 0, expiresAt: 3_600_000 }),
      cache: memoryCache(cached),
      now: () => 1000,
    });
    expect((await up.renewNow()).accessToken).toBe('new');
    expect(await up.get()).toBe('new');
    const down = new TokenProvider({
      fetchToken: async () => {
        throw new Error('503');
      },
      cache: memoryCache(cached),
      now: () => 1000,
    });
    await expect(down.renewNow()).rejects.toThrow('503');
    expect(await down.get()).toBe('old');
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

describe('TokenProvider: what it tells, and when it asks', () => {
  const hour = (accessToken: string, obtainedAt = 0) => ({
    accessToken,
    obtainedAt,
    expiresAt: obtainedAt + 3_600_000,
  });

  function provider(options: { cache?: TokenCache; now?: () => number } = {}) {
    const events: TokenEvent[] = [];
    let n = 0;
    const fetchToken = vi.fn(async () => hour(`t${++n}`, options.now?.() ?? 0));
    const p = new TokenProvider({
      fetchToken,
      cache: options.cache,
      now: options.now ?? (() => 1000),
      onEvent: (e) => events.push(e),
    });
    return { p, events, fetchToken };
  }

  it('a fresh cached token: "cached" with its expiry, nothing requested', async () => {
    const { p, events, fetchToken } = provider({ cache: memoryCache(hour('c')) });
    expect(await p.getToken()).toEqual(hour('c'));
    expect(events).toEqual([{ type: 'token', action: 'cached', expiresAt: 3_600_000 }]);
    expect(fetchToken).not.toHaveBeenCalled();
  });

  it('no token anywhere: "requested" for none, then "obtained" with the expiry', async () => {
    const { p, events } = provider({ cache: memoryCache() });
    expect(await p.get()).toBe('t1');
    expect(events).toEqual([
      { type: 'token', action: 'requested', reason: 'none' },
      { type: 'token', action: 'obtained', expiresAt: 3_600_000 },
    ]);
  });

  it('an expired cached token is not used: requested as "expiring", never told as cached', async () => {
    const cache = memoryCache(hour('old'));
    const { p, events } = provider({ cache, now: () => 3_590_000 });
    expect(await p.get()).toBe('t1');
    expect(events.map((e) => ('reason' in e ? `${e.action}:${e.reason}` : e.action))).toEqual([
      'requested:expiring',
      'obtained',
    ]);
    expect(cache.saved.map((t) => t.accessToken)).toEqual(['t1']);
  });

  it('the token of this run running out: requested as "expiring"', async () => {
    let now = 1000;
    const { p, events } = provider({ now: () => now });
    await p.get();
    now = 3_590_000;
    expect(await p.get()).toBe('t2');
    expect(events.filter((e) => e.action === 'requested')).toEqual([
      { type: 'token', action: 'requested', reason: 'none' },
      { type: 'token', action: 'requested', reason: 'expiring' },
    ]);
  });

  it('reads the cache once per run, not on every call', async () => {
    const cache = memoryCache(hour('c'));
    const load = vi.spyOn(cache, 'load');
    const { p } = provider({ cache });
    await p.get();
    await p.get();
    expect(load).toHaveBeenCalledTimes(1);
  });

  it('a refusal: requested as "refused", the refused token forgotten in the cache too', async () => {
    const cache = memoryCache(hour('c'));
    const { p, events } = provider({ cache });
    await p.get();
    expect(await p.refused('c')).toBe('t1');
    expect(cache.cleared).toBe(1);
    expect(events.at(-2)).toEqual({ type: 'token', action: 'requested', reason: 'refused' });
    // The next call uses the renewed token, without asking again.
    expect(await p.get()).toBe('t1');
  });

  it('a refusal of an older token, once a fresh one is held: the fresh one, nothing asked or cleared', async () => {
    const cache = memoryCache(hour('c'));
    const { p, fetchToken } = provider({ cache });
    await p.get();
    expect(await p.refused('some-older-token')).toBe('c');
    expect(fetchToken).not.toHaveBeenCalled();
    expect(cache.cleared).toBe(0);
  });

  it('a refusal of an older token when the held one is expiring: renews, keeps the cache', async () => {
    let now = 1000;
    const cache = memoryCache(hour('c'));
    const { p, fetchToken } = provider({ cache, now: () => now });
    await p.get();
    now = 3_590_000;
    expect(await p.refused('some-older-token')).toBe('t1');
    expect(fetchToken).toHaveBeenCalledTimes(1);
    expect(cache.cleared).toBe(0);
  });

  it('a refusal before any token was held: renews, clears nothing', async () => {
    const cache = memoryCache();
    const { p } = provider({ cache });
    expect(await p.refused('x')).toBe('t1');
    expect(cache.cleared).toBe(0);
  });

  it('renewNow asks even with a fresh token cached, and the cache is then not read', async () => {
    const cache = memoryCache(hour('c'));
    const load = vi.spyOn(cache, 'load');
    const { p, events } = provider({ cache });
    expect((await p.renewNow()).accessToken).toBe('t1');
    expect(await p.get()).toBe('t1');
    expect(load).not.toHaveBeenCalled();
    expect(events[0]).toEqual({ type: 'token', action: 'requested', reason: 'none' });
  });

  it('a cache that cannot save: "not-saved" with the reason, the token still used', async () => {
    const cache: TokenCache = {
      load: () => undefined,
      save: () => {
        throw new Error('read-only folder');
      },
      clear: () => {
        throw new Error('read-only folder');
      },
    };
    const { p, events } = provider({ cache });
    expect(await p.get()).toBe('t1');
    expect(events).toContainEqual({ type: 'token', action: 'not-saved', reason: 'read-only folder' });
    expect(await p.refused('t1')).toBe('t2');
    const thrown: TokenCache = {
      load: () => undefined,
      save: () => {
        throw 'disk full';
      },
      clear: () => {},
    };
    const other = provider({ cache: thrown });
    await other.p.get();
    expect(other.events).toContainEqual({ type: 'token', action: 'not-saved', reason: 'disk full' });
  });

  it('without a cache: requested and obtained, nothing about saving', async () => {
    const { p, events } = provider();
    await p.get();
    expect(await p.refused('t1')).toBe('t2');
    expect(events.map((e) => e.action)).toEqual(['requested', 'obtained', 'requested', 'obtained']);
  });

  it('a saved token raises no "not-saved"', async () => {
    const { p, events } = provider({ cache: memoryCache() });
    await p.get();
    expect(events.some((e) => e.action === 'not-saved')).toBe(false);
  });
});

describe('isFresh at its edges', () => {
  it('a token whose expiry is before its start gets no margin: it is fresh until its expiry, not after', () => {
    expect(isFresh({ accessToken: 'a', obtainedAt: 10_000, expiresAt: 5_000 }, 4_000)).toBe(true);
    expect(isFresh({ accessToken: 'a', obtainedAt: 10_000, expiresAt: 5_000 }, 5_000)).toBe(false);
  });

  it('the margin is exactly a minute for long tokens and exactly a tenth for short ones', () => {
    const hour = { accessToken: 'a', obtainedAt: 0, expiresAt: 3_600_000 };
    expect(isFresh(hour, 3_540_000 - 1)).toBe(true);
    expect(isFresh(hour, 3_540_000)).toBe(false);
    const tenSeconds = { accessToken: 'b', obtainedAt: 0, expiresAt: 10_000 };
    expect(isFresh(tenSeconds, 8_999)).toBe(true);
    expect(isFresh(tenSeconds, 9_000)).toBe(false);
  });
});
