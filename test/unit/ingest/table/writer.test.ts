import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { TableReader } from '../../../../src/ingest/table/reader.js';
import { checkOutputPath, CsvFile, CsvStream, csvCellText, csvLine } from '../../../../src/ingest/table/writer.js';
import { isTemporaryOf } from '../../../../src/io/safe-file.js';
import { scratchDir } from '../../../helpers/scratch.js';

const work = scratchDir('leadctl-writer-');

describe('the one CSV writer', () => {
  it.each([
    ['=HYPERLINK("http://x","y")', `'=HYPERLINK("http://x","y")`],
    ['@SUM(A1:A2)', "'@SUM(A1:A2)"],
    ['+1-800-FLOWERS', "'+1-800-FLOWERS"],
    ['-cmd', "'-cmd"],
    ['\tx', "'\tx"],
    ['\rx', "'\rx"],
    ['-12.5', '-12.5'],
    ['+3', '+3'],
    ['1e-5', '1e-5'],
    ['-1.5E+12', '-1.5E+12'],
    ['-2e10', '-2e10'],
    ['+.25', '+.25'],
    ['-7.', '-7.'],
    ['-1e', "'-1e"],
    ['-1e+', "'-1e+"],
    ['-1x5', "'-1x5"],
    ['-1.5e3x', "'-1.5e3x"],
    ['-1ea', "'-1ea"],
    ['-.', "'-."],
    ['--5', "'--5"],
    ['plain', 'plain'],
  ])('neutralises formulas: %j becomes %j', (value, written) => {
    expect(csvCellText(value)).toBe(written);
    expect(csvCellText(value, { raw: true })).toBe(value);
  });

  it('writes numbers with their sign, booleans as words, objects as JSON, nothing for null', () => {
    expect(csvLine([-4, true, false, null, undefined, { a: 1 }])).toBe('-4,true,false,,,"{""a"":1}"\n');
  });

  it('writes a number as the number it is, even where its text would look like a formula', () => {
    expect(csvCellText(-Infinity)).toBe('-Infinity');
    expect(csvCellText(-12n)).toBe('-12');
    expect(csvCellText(Number.NaN)).toBe('NaN');
    expect(csvCellText('-Infinity')).toBe("'-Infinity");
  });

  it('no written cell starts with a formula character unless raw, and the reader reads back what was meant', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.string({ maxLength: 12 }), { minLength: 2, maxLength: 5 }), {
          minLength: 1,
          maxLength: 8,
        }),
        (rows) => {
          const text = rows.map((r) => csvLine(r)).join('');
          const back: string[][] = [];
          const reader = new TableReader({ delimiter: ',', file: 'w.csv' });
          reader.write(text, (cells) => back.push(cells));
          reader.end((cells) => back.push(cells));
          expect(back).toHaveLength(rows.length);
          back.forEach((cells, i) =>
            cells.forEach((cell, j) => {
              expect(/^[=+\-@\t\r]/.test(cell) && !/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(cell)).toBe(false);
              expect(cell === rows[i]![j] || cell === `'${rows[i]![j]}`).toBe(true);
            }),
          );
        },
      ),
      { seed: 4242, numRuns: 300 },
    );
  });

  it('writes a temporary NAME.<random>.partial with mode 0600 and renames it when closed; abort leaves nothing', () => {
    const file = new CsvFile('out.csv', work, ['a', 'b'], { what: 'the test file' });
    file.writeRows([['=1+1', 2]]);
    expect(existsSync(join(work, 'out.csv'))).toBe(false);
    const partial = readdirSync(work).filter((n) => isTemporaryOf(join(work, 'out.csv'), n));
    expect(partial).toHaveLength(1);
    expect(statSync(join(work, partial[0]!)).mode & 0o777).toBe(0o600);
    file.close();
    expect(readFileSync(join(work, 'out.csv'), 'utf8')).toBe("a,b\n'=1+1,2\n");
    expect(readdirSync(work).filter((n) => n.endsWith('.partial'))).toEqual([]);
    const aborted = new CsvFile('gone.csv', work, ['a'], { what: 'the test file' });
    aborted.writeRows([['x']]);
    aborted.abort();
    expect(existsSync(join(work, 'gone.csv'))).toBe(false);
    expect(readdirSync(work).filter((n) => n.endsWith('.partial'))).toEqual([]);
  });

  it('says whether the file exists: from open or the first row, still after close, not after abort', () => {
    const header = new CsvFile('header-only.csv', work, ['a'], { what: 'the test file' });
    expect(header.opened).toBe(false);
    header.open();
    expect(header.opened).toBe(true);
    header.close();
    expect(readFileSync(join(work, 'header-only.csv'), 'utf8')).toBe('a\n');
    expect(header.opened).toBe(true);
    const never = new CsvFile('never.csv', work, ['a'], { what: 'the test file' });
    never.close();
    expect(never.opened).toBe(false);
    expect(existsSync(join(work, 'never.csv'))).toBe(false);
    const aborted = new CsvFile('aborted.csv', work, ['a'], { what: 'the test file' });
    aborted.writeRows([['x']]);
    aborted.abort();
    expect(aborted.opened).toBe(false);
  });

  it('refuses a directory or a missing folder before anything is written', () => {
    mkdirSync(join(work, 'a-dir'));
    expect(() => checkOutputPath('a-dir', work, '--out')).toThrow(/--out a-dir is a directory; name a file/);
    expect(() => checkOutputPath('no/such/x.csv', work, '--out')).toThrow(
      /cannot write --out no\/such\/x\.csv: its folder does not exist/,
    );
    expect(checkOutputPath('fine.csv', work, '--out')).toBe(join(work, 'fine.csv'));
  });
});

describe('values quoted in messages', () => {
  it('are cut with their length shown, so a 20 MB cell never becomes 20 MB of stderr', async () => {
    const { quoteValue } = await import('../../../../src/errors.js');
    const { compileDateTimeParser, resolveZone } = await import('../../../../src/ingest/mapping/datetime.js');
    expect(quoteValue('short')).toBe('"short"');
    expect(quoteValue('A'.repeat(20_000_000))).toBe(`"${'A'.repeat(60)}…" (20,000,000 chars)`);
    const refused = compileDateTimeParser(['M/d/yyyy'], resolveZone('UTC')!)('9'.repeat(100_000));
    expect(!refused.ok && refused.reason.length).toBeLessThan(200);
  });

  it('counts the rows written, creates nothing for no rows, and completes a never-opened file as nothing', () => {
    const file = new CsvFile('counted.csv', work, ['a'], { what: 'the test file' });
    file.writeRows([]);
    expect(file.opened).toBe(false);
    file.close();
    expect(existsSync(join(work, 'counted.csv'))).toBe(false);
    file.writeRows([['1'], ['2']]);
    file.writeRows([['3']]);
    expect(file.opened).toBe(true);
    expect(file.count).toBe(3);
    file.open();
    file.close();
    expect(readFileSync(join(work, 'counted.csv'), 'utf8')).toBe('a\n1\n2\n3\n');
  });

  it('a write that fails removes the file and keeps failing with the same error', () => {
    const file = new CsvFile('/dev/full', work, ['a'], { what: 'the test file' });
    let first: unknown;
    try {
      file.writeRows([['x'.repeat(70_000)]]);
    } catch (err) {
      first = err;
    }
    expect(first).toBeInstanceOf(Error);
    expect(() => file.open()).toThrow(first as Error);
    expect(file.opened).toBe(false);
  });
});

describe('CSV rows onto a stream', () => {
  const sink = (highWaterMark: number) => {
    const chunks: string[] = [];
    const out = new Writable({
      highWaterMark,
      write(chunk, _encoding, done) {
        chunks.push(String(chunk));
        setImmediate(done);
      },
    });
    return { out, chunks };
  };

  it('writes the header once, before the first row, and waits for the stream to drain', async () => {
    const { out, chunks } = sink(1);
    const csv = new CsvStream(out, ['id', 'n']);
    await csv.write(['a', 1]);
    await csv.write(['=b', 2]);
    await csv.end();
    expect(chunks.join('')).toBe("id,n\na,1\n'=b,2\n");
  });

  it('still writes the header when no row came, and raw values when asked', async () => {
    const { out, chunks } = sink(1024);
    await new CsvStream(out, ['id']).end();
    expect(chunks.join('')).toBe('id\n');
    const raw = sink(1024);
    const csv = new CsvStream(raw.out, ['v'], { raw: true });
    await csv.write(['=1']);
    await csv.end();
    await csv.end();
    expect(raw.chunks.join('')).toBe('v\n=1\n');
  });

  it('says why when the stream has failed, instead of waiting for a drain that never comes', async () => {
    const out = new Writable({
      write(_chunk, _encoding, done) {
        done(Object.assign(new Error('no space left on device'), { code: 'ENOSPC' }));
      },
    });
    out.on('error', () => {});
    const csv = new CsvStream(out, ['a']);
    await csv.write(['1']).catch(() => {});
    await new Promise((resolve) => setImmediate(resolve));
    await expect(csv.write(['2'])).rejects.toThrow(/no space left/);
  });
});
