import { describe, expect, it } from 'vitest';
import type { ListUploadResult } from '../../../src/jobs/list-upload.js';
import { listFacts } from '../../../src/jobs/run-facts.js';
import { RunRecorder } from '../../../src/jobs/run-record.js';
import { manualClock, runContext } from '../../helpers/run-report.js';

function result(outcome: ListUploadResult['outcome'], n: number): ListUploadResult {
  return {
    outcome,
    summary: {
      list_id: 9,
      name: 'One',
      type: 'Social Security Numbers',
      file: 'one.csv',
      format: 'lines',
      csv_from_row: null,
      column: null,
      header_row: null,
      rows_read: n,
      blank: 0,
      valid: outcome === 'invalid' ? 0 : n,
      normalised: 0,
      duplicates: 0,
      rejected: outcome === 'invalid' ? n : 0,
      distinct: n,
      uploaded: outcome === 'uploaded' ? n : 0,
      validate_only: outcome === 'validated',
      rejects_file: null,
      elapsed_seconds: 0,
    },
    problems: [],
    problemCount: outcome === 'invalid' ? n : 0,
    reasons: [],
  } as unknown as ListUploadResult;
}

describe('the words of a list upload', () => {
  it.each([
    ['uploaded', 1, 'uploaded: 1 value to list 9 ("One")'],
    ['uploaded', 2, 'uploaded: 2 values to list 9 ("One")'],
    ['validated', 1, 'validated: 1 value would be uploaded (nothing was sent)'],
    ['invalid', 1, 'not uploaded: 1 invalid row (fix it, or use --skip-invalid)'],
    ['invalid', 1200, 'not uploaded: 1,200 invalid rows (fix them, or use --skip-invalid)'],
  ] as const)('%s, %i: %s', async (outcome, n, words) => {
    const recorder = new RunRecorder(manualClock().now);
    const facts = await listFacts(result(outcome, n), 0, runContext(recorder, { command: 'lists create' }));
    expect(facts.statusWords).toBe(words);
  });
});
