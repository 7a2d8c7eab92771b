import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/errors.js';
import { MAX_LEAD_ID_PAGES, MAX_LIST_PAGES, PageGuard, PagingError } from '../../../src/api/paging.js';

/** Following a service's pages: a page that cannot be trusted ends the run before any of it is used. */

function refusal(run: () => void): PagingError {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(PagingError);
    return err as PagingError;
  }
  throw new Error('expected a PagingError');
}

describe('PageGuard', () => {
  it('lets sound pages through, counting them', () => {
    const guard = new PageGuard<number>('lead ids', 3);
    guard.check({ ids: [1, 2], nextCursor: 'b', reportedPages: 3 });
    guard.check({ ids: [3], nextCursor: 'c' });
    guard.check({ ids: [], nextCursor: null });
    expect(guard.pages).toBe(3);
  });

  it('refuses a reported page count over the limit (at the limit is fine), with the figures', () => {
    new PageGuard('lists', 1_000).check({ ids: [], reportedPages: 1_000 });
    const err = refusal(() => new PageGuard('lists', 1_000).check({ ids: [], reportedPages: 1_001 }));
    expect(err.message).toBe('the service reports 1,001 pages of lists, more than the 1,000 leadctl will follow');
    expect(err.fault).toEqual({ reported_pages: 1_001, limit: 1_000 });
    expect(err.exitCode).toBe(ExitCode.SERVICE);
    expect(err.code).toBe('paging');
    expect(err.hint).toMatch(/^the service's paging is inconsistent; nothing after the last good page was printed/);
  });

  it('refuses the page past the limit', () => {
    const guard = new PageGuard<string>('lead ids', 2);
    guard.check({ ids: ['a'], nextCursor: '1' });
    guard.check({ ids: ['b'], nextCursor: '2' });
    const err = refusal(() => guard.check({ ids: ['c'], nextCursor: '3' }));
    expect(err.message).toBe('the service kept sending pages of lead ids past 2 pages');
    expect(err.fault).toEqual({ pages: 3, limit: 2 });
    const big = new PageGuard<string>('lists', 1_500);
    big.pages = 1_500;
    expect(refusal(() => big.check({ ids: [] })).message).toBe(
      'the service kept sending pages of lists past 1,500 pages',
    );
  });

  it('refuses an id sent on an earlier page, or twice on the same page, saying which', () => {
    const guard = new PageGuard<number>('lead ids', 10);
    guard.check({ ids: [1, 2], nextCursor: 'x' });
    const earlier = refusal(() => guard.check({ ids: [3, 2] }));
    expect(earlier.message).toBe('page 2 of lead ids repeats 2, already sent on an earlier page');
    expect(earlier.fault).toEqual({ page: 2, repeated: 2 });
    const same = refusal(() => new PageGuard<string>('lists', 10).check({ ids: ['a', 'b', 'a'] }));
    expect(same.message).toBe('page 1 of lists repeats a, already sent on the same page');
    expect(same.fault).toEqual({ page: 1, repeated: 'a' });
  });

  it('a refused page adds none of its ids', () => {
    const guard = new PageGuard<number>('lead ids', 10);
    refusal(() => guard.check({ ids: [5, 6, 6] }));
    guard.check({ ids: [5, 6] });
    expect(guard.pages).toBe(2);
  });

  it('refuses a cursor already followed, the starting one included', () => {
    const guard = new PageGuard<number>('lists', 10, 'start');
    guard.check({ ids: [1], nextCursor: 'p2' });
    const back = refusal(() => guard.check({ ids: [2], nextCursor: 'p2' }));
    expect(back.message).toBe('page 2 of lists points back to a cursor already followed (p2): the paging would loop');
    expect(back.fault).toEqual({ page: 2, cursor: 'p2' });
    expect(
      refusal(() => new PageGuard<number>('lists', 10, 'start').check({ ids: [], nextCursor: 'start' })).fault,
    ).toEqual({
      page: 1,
      cursor: 'start',
    });
    // No starting cursor, an empty next cursor: nothing to loop on.
    const open = new PageGuard<number>('lists', 10, '');
    open.check({ ids: [], nextCursor: '' });
    open.check({ ids: [], nextCursor: '' });
  });

  it('has limits beyond any real account', () => {
    expect(MAX_LIST_PAGES).toBe(1_000);
    expect(MAX_LEAD_ID_PAGES).toBe(100_000);
  });
});
