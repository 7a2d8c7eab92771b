import { describe, expect, it } from 'vitest';
import { count, seconds } from '../../../src/output/words.js';

describe('words for counts and durations', () => {
  it('uses the singular for exactly one', () => {
    expect(count(1, 'customer')).toBe('1 customer');
    expect(count(0, 'customer')).toBe('0 customers');
    expect(count(1234, 'row')).toBe('1,234 rows');
    expect(count(2, 'entry', 'entries')).toBe('2 entries');
  });

  it('never says 0 s', () => {
    expect(seconds(0)).toBe('under 0.1 s');
    expect(seconds(0.04)).toBe('under 0.1 s');
    expect(seconds(0.3)).toBe('0.3 s');
    expect(seconds(9.94)).toBe('9.9 s');
    expect(seconds(83.6)).toBe('84 s');
  });
});
