import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { sortByCustomer } from '../../../../src/ingest/lms/line-sort.js';
import { streamGroups } from '../../../../src/ingest/lms/stream.js';
import { TempFolder } from '../../../../src/ingest/lms/temp-folder.js';
import { MAX_FIELD_CHARS } from '../../../../src/ingest/table/reader.js';
import { IDENTITY_MAPPING } from '../../../../src/ingest/mapping/mapping.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-line-sort-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

const HEADER = 'customer_id,loan_id,lead_id,loan_amount,applied_at,is_lead_loan,payment_id,payment_at';

/** The text in chunks of `chunk` characters, as the decoder hands them on (at most 64K characters). */
function source(text: string, chunk: number) {
  const chunks: string[] = [];
  for (let i = 0; i < text.length; i += chunk) chunks.push(text.slice(i, i + chunk));
  return { name: 'export.csv', stream: Readable.from(chunks, { objectMode: true }), gzipped: false };
}

describe('the line sort', () => {
  it('never hands the reader a line over a megabyte, whose refusal would name the sorted row', async () => {
    // Row 2 holds a value past the reader's limit; row 3's customer sorts first, so in the sorted
    // text the long line is row 3. The line ends inside the chunk that brings its last 64K
    // characters: the cut never held it whole as an unfinished line.
    const long = `Z,L1,${'x'.repeat(MAX_FIELD_CHARS + 24)},100,2024-01-01,Y,P1,2024-02-01\n`;
    const text = `${HEADER}\n${long}A,L1,x,100,2024-01-01,Y,P1,2024-02-01\n`;
    const folder = new TempFolder(work);
    try {
      const sorted = await sortByCustomer(
        { input: source(text, 1 << 16), role: 'rows' },
        { mapping: IDENTITY_MAPPING, folder },
      );
      // Given up (the staging then names row 2), or read with the file's rows: never row 3.
      if (sorted === undefined) return;
      const groups = streamGroups(sorted.input, {
        mapping: IDENTITY_MAPPING,
        src: 0,
        problems: () => {},
        rows: sorted.rows,
      });
      let error: unknown;
      try {
        for await (const _ of groups);
      } catch (err) {
        error = err;
      }
      expect(String(error)).toMatch(/export\.csv, row 2, column 3: the value holds/);
    } finally {
      folder.close();
    }
  });
});
