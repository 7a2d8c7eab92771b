import { describe, expect, it } from 'vitest';
import { didYouMean, editDistance, similar } from '../../src/suggest.js';

describe('did you mean', () => {
  it('counts a transposition as one edit', () => {
    expect(editDistance('emial', 'email')).toBe(1);
    expect(editDistance('ssn', 'ssn4')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });
  it('offers the nearest candidates, best first, and nothing when none is close', () => {
    expect(similar('phnoe', ['zip', 'phone', 'email'])).toEqual(['phone']);
    expect(similar('SSNN', ['ssn', 'ssn4', 'zip'])).toEqual(['ssn', 'ssn4']);
    expect(similar('banana', ['ssn', 'zip'])).toEqual([]);
    expect(didYouMean('rouitng', ['routing', 'zip'])).toBe(' (did you mean routing?)');
    expect(didYouMean('xyz', ['routing'])).toBe('');
  });
});
