import { InvalidArgumentError } from '@commander-js/extra-typings';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { removalLimit } from '../../../src/cli/parse.js';
import { DEFAULT_REMOVAL_LIMIT, describeLimit, removesTooMany } from '../../../src/jobs/list-diff.js';

describe('--max-removed', () => {
  it('reads a count or a percentage, and refuses anything else', () => {
    expect(removalLimit('500')).toEqual({ count: 500 });
    expect(removalLimit(' 0 ')).toEqual({ count: 0 });
    expect(removalLimit('10%')).toEqual({ percent: 10 });
    expect(removalLimit('12.5 %')).toEqual({ percent: 12.5 });
    expect(removalLimit('100%')).toEqual({ percent: 100 });
    for (const bad of ['', '-1', '101%', '1e3', 'half', '%', '50%%', '99999999999999999999'])
      expect(() => removalLimit(bad), bad).toThrow(InvalidArgumentError);
  });

  it('allows exactly the limit, refuses one more, by count and by share', () => {
    expect(removesTooMany({ added: 0, removed: 10, unchanged: 90 }, { count: 10 })).toBe(false);
    expect(removesTooMany({ added: 0, removed: 11, unchanged: 89 }, { count: 10 })).toBe(true);
    expect(removesTooMany({ added: 9, removed: 50, unchanged: 50 }, DEFAULT_REMOVAL_LIMIT)).toBe(false);
    expect(removesTooMany({ added: 0, removed: 51, unchanged: 49 }, DEFAULT_REMOVAL_LIMIT)).toBe(true);
    // Nothing uploaded before: nothing to remove.
    expect(removesTooMany({ added: 7, removed: 0, unchanged: 0 }, { percent: 0 })).toBe(false);
    expect(describeLimit({ count: 1500 })).toBe('1,500');
    expect(describeLimit({ percent: 50 })).toBe('50%');
  });

  it('100% allows any update, and a share refuses exactly when removed/before exceeds it (property)', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), fc.integer({ min: 0, max: 100 }), (removed, unchanged, percent) => {
        const changes = { added: 0, removed, unchanged };
        expect(removesTooMany(changes, { percent: 100 })).toBe(false);
        const before = removed + unchanged;
        expect(removesTooMany(changes, { percent })).toBe(before > 0 && removed / before > percent / 100);
      }),
    );
  });
});
