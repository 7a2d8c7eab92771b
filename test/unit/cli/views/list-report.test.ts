import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { runListUpload } from '../../../../src/jobs/list-upload.js';
import { printProblems } from '../../../../src/cli/views/list-report.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-list-report-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function stderr() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (d: Buffer) => (text += d.toString('utf8')));
  return { stream, text: () => text };
}

describe('the grouped reasons of a list upload', () => {
  it('shows a value of hundreds of KB cut to 60 characters with its length, quickly; the rejects file keeps it whole', async () => {
    const value = `Acme ${'Holdings '.repeat(40_000)}`.trim();
    const io = { cwd: dir, now: () => new Date(), stdin: Readable.from([Buffer.from(`Affiliate\n${value}\nok\n`)]) };
    const result = await runListUpload(
      { input: '-', name: 'l', type: 'Affiliates', validateOnly: true, rejectsPath: 'rejects.csv' },
      { io },
    );
    const example = result.reasons[0]!.example.value;
    expect(example).toBe(`${value.slice(0, 60)}… (${value.length.toLocaleString('en-US')} chars)`);
    expect(result.problems[0]!.value).toBe(example);
    expect(readFileSync(join(dir, 'rejects.csv'), 'utf8')).toContain(value);

    const out = stderr();
    const started = performance.now();
    await printProblems(out.stream, result, 'stdin: 1 invalid row:');
    // A generous guard: this took minutes when the table measured the whole value once per line.
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(out.text()).toContain('2: Acme Holdings');
    expect(out.text().split('\n').length).toBeLessThan(20);
  });
});
