import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { CustomerGroup } from '../../../../src/ingest/lms/groups.js';
import { stageExport } from '../../../../src/ingest/lms/inputs.js';
import { streamBatchJson } from '../../../../src/ingest/lms/json.js';
import type { RowProblem } from '../../../../src/ingest/lms/rows.js';
import { compareIds, Staging } from '../../../../src/ingest/lms/staging.js';
import { NotSortedError } from '../../../../src/ingest/lms/stream.js';
import { IDENTITY_MAPPING } from '../../../../src/ingest/mapping/mapping.js';
import { openInput } from '../../../../src/ingest/sources.js';
import { validateGroup } from '../../../../src/jobs/push/validate.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-json-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const io = { stdin: process.stdin, cwd: work };
const byPlace = (a: RowProblem, b: RowProblem) => a.src - b.src || a.row - b.row;

async function staged(file: string) {
  const staging = new Staging();
  const problems: RowProblem[] = [];
  try {
    const result = await stageExport({
      inputs: [{ path: file, role: 'auto' }],
      mapping: IDENTITY_MAPPING,
      problems: (p) => problems.push(p),
      io,
      staging,
    });
    return { groups: [...result.groups()], problems, rows: result.rowsRead };
  } finally {
    staging.close();
  }
}

async function streamed(file: string, format: 'json' | 'ndjson', look = false) {
  const problems: RowProblem[] = [];
  const groups: CustomerGroup[] = [];
  const stream = streamBatchJson(await openInput(file, io), format, {
    mapping: IDENTITY_MAPPING,
    src: 0,
    problems: (p) => problems.push(p),
    // A first look that finds nothing recorded: every line is read, as without it.
    unchanged: look ? (raws) => raws.map(() => undefined) : undefined,
  });
  let next = await stream.next();
  for (; !next.done; next = await stream.next()) groups.push(next.value);
  return { groups, problems, rows: next.value };
}

// Values as other systems write them: right, wrong, of the wrong kind, missing.
const value = fc.oneof(
  fc.constantFrom('12.50', '$12.50', '1250', '', 'PAID', 'ACH', '2026-11-20', '2026-11-20T18:05:00-06:00', 'yes'),
  fc.integer({ min: -5, max: 100_000 }),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 1 }),
);
const payment = fc.record(
  {
    payment_id: fc.oneof(fc.constantFrom('P1', 'P2', 'P3', ''), fc.integer({ max: 3 })),
    payment_amount: value,
    payment_status: value,
    posted_at: value,
    interest: value,
    memo: value,
  },
  { requiredKeys: ['payment_id'] },
);
const loan = fc.record(
  {
    loan_id: fc.constantFrom('L1', 'L2', 'L3'),
    loan_amount: value,
    loan_status: value,
    applied_at: value,
    is_lead_loan: value,
    payments: fc.oneof({ weight: 8, arbitrary: fc.array(payment, { maxLength: 4 }) }, { weight: 1, arbitrary: value }),
  },
  { requiredKeys: ['loan_id'] },
);
const customer = fc.oneof(
  {
    weight: 12,
    arbitrary: fc.record(
      {
        customer_id: fc.oneof(fc.stringMatching(/^[0-9A-Za-z\u00e9\u{1F600}-]{1,4}$/u), fc.constant(''), value),
        loans: fc.oneof({ weight: 8, arbitrary: fc.array(loan, { maxLength: 3 }) }, { weight: 1, arbitrary: value }),
      },
      { requiredKeys: ['customer_id'] },
    ),
  },
  { weight: 1, arbitrary: value },
);
// A line that is no JSON at all, or nothing.
const line = fc.oneof(
  { weight: 20, arbitrary: customer.map((c) => JSON.stringify(c)) },
  { weight: 1, arbitrary: fc.constantFrom('{"customer_id": "9", "loans": [', '', '   ') },
);

/** Keeps the first line of each customer id and puts them in the staging's order: a sorted export. */
function sortedLines(lines: string[]): string[] {
  const byId = new Map<string, string>();
  const others: string[] = [];
  for (const text of lines) {
    let id: unknown;
    try {
      id = (JSON.parse(text) as { customer_id?: unknown })?.customer_id;
    } catch {
      // not JSON: kept, it names no customer
    }
    // As the reader takes it: a number or a boolean is its text.
    if (typeof id === 'number' || typeof id === 'boolean') id = String(id);
    if (typeof id === 'string' && id.trim() !== '') {
      if (!byId.has(id)) byId.set(id, text);
    } else others.push(text);
  }
  const sorted = [...byId.keys()].sort(compareIds).map((id) => byId.get(id)!);
  // Lines naming no customer anywhere among them: they are reported where they are, whatever the order.
  return [...others.slice(0, 2), ...sorted, ...others.slice(2)];
}

describe('batch-shape input streamed as read', () => {
  it('gives exactly the groups, problems and rows the staging gives, or finds the file unsorted', async () => {
    let sortedRuns = 0;
    let unsortedRuns = 0;
    let linesGiven = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(line, { maxLength: 30 }), fc.boolean(), fc.boolean(), async (lines, sort, asArray) => {
        const text = sort ? sortedLines(lines) : lines;
        const format = asArray ? 'json' : 'ndjson';
        const file = `input.${format}`;
        // A JSON document holds no line that is not a value.
        const values = asArray
          ? text.filter((t) => {
              try {
                JSON.parse(t);
                return true;
              } catch {
                return false;
              }
            })
          : text;
        writeFileSync(join(work, file), asArray ? `[${values.join(',\n')}]` : values.join('\n'));
        const a = await staged(file);
        // The staging sorts; the stream keeps the file's order, and must find any other.
        const sortedInFile =
          a.groups.every((g) => g.duplicates.every((d) => d.level !== 'customer')) &&
          a.groups.every((g, i) => i === 0 || a.groups[i - 1]!.origin.row < g.origin.row);
        if (!sortedInFile) {
          unsortedRuns++;
          await expect(streamed(file, format)).rejects.toBeInstanceOf(NotSortedError);
          return;
        }
        sortedRuns++;
        const b = await streamed(file, format);
        expect(b.groups).toStrictEqual(a.groups);
        // With a first look: the same, and a line given to a customer is the whole of its line.
        const c = await streamed(file, format, true);
        const written = values.map((t) => t.replace(/\r$/, ''));
        for (const group of c.groups) {
          if (group.raw === undefined) continue;
          expect(format).toBe('ndjson');
          expect(group.raw.customerId).toBe(group.customerId);
          expect(group.raw.text).toBe(written[group.origin.row - 1]);
          expect(group.duplicates).toEqual([]);
          linesGiven++;
          delete group.raw;
        }
        expect(c.groups).toStrictEqual(a.groups);
        expect([...c.problems].sort(byPlace)).toEqual([...a.problems].sort(byPlace));
        expect(c.rows).toBe(a.rows);
        expect(b.rows).toBe(a.rows);
        expect([...b.problems].sort(byPlace)).toEqual([...a.problems].sort(byPlace));
        expect(JSON.stringify(b.groups.map((g) => validateGroup(g)))).toBe(
          JSON.stringify(a.groups.map((g) => validateGroup(g))),
        );
      }),
      { numRuns: 150 },
    );
    // Both ways were taken, many times each.
    expect(sortedRuns).toBeGreaterThan(30);
    expect(unsortedRuns).toBeGreaterThan(10);
    expect(linesGiven).toBeGreaterThan(20);
  });
});

describe('streamBatchJson lets go of the file', () => {
  const big = (n: number) =>
    Array.from({ length: n }, (_, i) => JSON.stringify({ customer_id: `C${String(i).padStart(6, '0')}`, loans: [] }));

  it('found unsorted, or left early: the input stream is closed, not left open until the process ends', async () => {
    // Far more than one chunk: the error and the early return come with most of the file unread.
    const lines = big(40_000);
    writeFileSync(join(work, 'unsorted-early.ndjson'), [lines[1], lines[0], ...lines.slice(2)].join('\n'));
    const unsorted = await openInput('unsorted-early.ndjson', io);
    const stream = streamBatchJson(unsorted, 'ndjson', { mapping: IDENTITY_MAPPING, src: 0, problems: () => {} });
    await expect(
      (async () => {
        for await (const _ of stream);
      })(),
    ).rejects.toBeInstanceOf(NotSortedError);
    expect(unsorted.stream.destroyed).toBe(true);

    writeFileSync(join(work, 'left-early.ndjson'), lines.join('\n'));
    const left = await openInput('left-early.ndjson', io);
    const groups = streamBatchJson(left, 'ndjson', { mapping: IDENTITY_MAPPING, src: 0, problems: () => {} });
    expect((await groups.next()).done).toBe(false);
    await groups.return(0);
    expect(left.stream.destroyed).toBe(true);
  });
});
