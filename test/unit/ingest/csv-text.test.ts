import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CsvTextReader, fastCsvDelimiter } from '../../../src/ingest/csv-text.js';
import { seededRandom } from '../../../src/sandbox/random.js';

type Outcome = { records: string[][] } | { error: string; lines: number | undefined };

/** What csv-parse makes of the text, with the options the push used to give it. */
function reference(text: string, delimiter: string): Outcome {
  try {
    return { records: parse(text, { delimiter, relax_column_count: true, bom: true }) as string[][] };
  } catch (err) {
    return { error: (err as Error).message, lines: (err as { lines?: number }).lines };
  }
}

/** What CsvTextReader makes of it, fed in the given pieces. */
function fast(pieces: string[], delimiter: string): Outcome {
  const records: string[][] = [];
  const reader = new CsvTextReader(delimiter);
  try {
    for (const piece of pieces) reader.write(piece, (cells) => records.push(cells));
    reader.end((cells) => records.push(cells));
    return { records };
  } catch (err) {
    return { error: (err as Error).message, lines: (err as { lines?: number }).lines };
  }
}

/** Mostly well-formed CSV with every awkward thing now and then (and sometimes broken quoting). */
function generate(random: () => number, delimiter: string, eol: string): string {
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
  const lines: string[] = [];
  const count = 1 + Math.floor(random() * 8);
  for (let r = 0; r < count; r++) {
    if (random() < 0.08) {
      lines.push('');
      continue;
    }
    const cells: string[] = [];
    const width = 1 + Math.floor(random() * 5);
    for (let c = 0; c < width; c++) {
      const plain = pick(['', 'a', 'Café', '$1,234.56', '7', ' x ', 'é€😀']).replaceAll(delimiter, '');
      const roll = random();
      if (roll < 0.55) cells.push(plain);
      else if (roll < 0.8) cells.push(`"${plain}${pick(['', delimiter, '""', '\n', '\r\n', '\r', ' '])}${plain}"`);
      else if (roll < 0.88) cells.push(`${plain}${pick(['\r', '\n', '\r\n'])}`);
      else if (roll < 0.94) cells.push(`${plain}"${plain}`); // a quote inside an unquoted cell
      else if (roll < 0.97) cells.push(`"${plain}"${pick(['x', ' ', '"'])}`); // text after the closing quote
      else cells.push(`"${plain}`); // never closed
    }
    lines.push(cells.join(delimiter));
  }
  let text = lines.join(eol);
  if (random() < 0.5) text += eol;
  if (random() < 0.1) text = '\ufeff' + text;
  return text;
}

function cut(random: () => number, text: string): string[] {
  const pieces: string[] = [];
  let i = 0;
  while (i < text.length) {
    const size = random() < 0.3 ? 1 : 1 + Math.floor(random() * 12);
    pieces.push(text.slice(i, i + size));
    i += size;
  }
  return pieces;
}

describe('CsvTextReader', () => {
  it('reads ordinary lines, quoted cells with delimiters and doubled quotes, and empty lines', () => {
    const text = 'a,b,c\n1,"$1,234.50","say ""hi"""\n\n"",x,\nlast,"",z';
    expect(fast([text], ',')).toEqual({ records: [['a', 'b', 'c'], ['1', '$1,234.50', 'say "hi"'], [''], ['', 'x', ''], ['last', '', 'z']] });
  });

  it('keeps line breaks inside quotes, and takes \\r\\n lines whatever the chunking', () => {
    const text = 'id,note\r\n1,"two\r\nlines"\r\n2,plain\r\n';
    const expected = { records: [['id', 'note'], ['1', 'two\r\nlines'], ['2', 'plain']] };
    expect(fast([text], ',')).toEqual(expected);
    expect(fast(text.split(''), ',')).toEqual(expected);
  });

  it('words malformed quoting as csv-parse does, with the file line', () => {
    const text = 'a,b\n1,2\n"x\ny",3\n4,5"6\n';
    const outcome = fast([text], ',');
    expect(outcome).toEqual(reference(text, ','));
    expect(outcome).toMatchObject({ lines: 5 });
    expect((outcome as { error: string }).error).toContain('Invalid Opening Quote');
  });

  it('gives exactly what csv-parse gives on generated input, cut anywhere', () => {
    const random = seededRandom(20261121);
    let errors = 0;
    for (let n = 0; n < 4000; n++) {
      const delimiter = [',', ';', '\t', '|'][n % 4]!;
      const eol = ['\n', '\r\n', '\r'][Math.floor(random() * 3)]!;
      const text = generate(random, delimiter, eol);
      const expected = reference(text, delimiter);
      if ('error' in expected) errors++;
      expect(fast([text], delimiter), JSON.stringify(text)).toEqual(expected);
      expect(fast(cut(random, text), delimiter), JSON.stringify(text)).toEqual(expected);
    }
    // The generator must exercise both sides.
    expect(errors).toBeGreaterThan(400);
    expect(errors).toBeLessThan(3600);
  });

  it('leaves a quote or a line break as delimiter to csv-parse', () => {
    expect(fastCsvDelimiter(',')).toBe(true);
    expect(fastCsvDelimiter('"')).toBe(false);
    expect(fastCsvDelimiter('\n')).toBe(false);
    expect(() => new CsvTextReader('\r')).toThrow();
  });
});
