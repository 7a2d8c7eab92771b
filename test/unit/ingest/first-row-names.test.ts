import { describe, expect, it } from 'vitest';
import { chooseColumn } from '../../../src/ingest/lists/columns.js';
import { starterMapping } from '../../../src/ingest/mapping/init.js';

// A file without a header has a row of data where its column names would be: every message or
// file that names columns shows an SSN or account number in it by its last four only.
describe('column names that are a first row of data', () => {
  const request = {
    headerMatches: () => false as const,
    looksLikeValue: (c: string) => /^\d{3}-?\d{2}-?\d{4}$/.test(c),
  };

  it('lists: the columns a file offers, when none is named for the type', () => {
    const run = () => chooseColumn(['Maria 123-45-6789', 'acct 000123456789'], request, 'hl.csv', 1);
    expect(run).toThrow('hl.csv has 2 columns (1: "Maria ***-**-6789", 2: "acct ********6789")');
  });

  it('mapping init: the columns it could not match, on screen and in the mapping file', () => {
    const starter = starterMapping([
      { path: 'x.csv', role: 'loans', header: ['100', '123-45-6789', '000123456789'], rows: [] },
    ] as never);
    expect(starter.unmatched).toEqual(['100', '***-**-6789', '********6789']);
    expect(JSON.stringify(starter.mapping)).not.toMatch(/123-45|0001234/);
  });
});
