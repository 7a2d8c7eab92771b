import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import type { ApiClient } from '../../../../src/api/client.js';
import type { PushEnvironment } from '../../../../src/jobs/push/batch.js';
import { runSinglePush } from '../../../../src/jobs/push/single.js';
import { memoryIO, type MemoryIO } from '../../../helpers/memory-io.js';

const fixtures = fileURLToPath(new URL('../../../../fixtures/lms/', import.meta.url));

function environment(io: MemoryIO, api: () => Promise<ApiClient>): PushEnvironment {
  return {
    io,
    target: async () => ({ profile: 'default', baseUrl: 'http://127.0.0.1:9' }),
    api,
    onEvent: () => undefined,
    warn: () => undefined,
    stopGraceMs: 2000,
  };
}

describe('single upserts and signals', () => {
  it('a signal before anything is sent ends with the summary: nothing sent, every valid record not sent, exit 143', async () => {
    const io = memoryIO({ cwd: fixtures });
    let sent = 0;
    const client = {
      token: async () => ({ accessToken: 't', obtainedAt: 0, expiresAt: 1e15 }),
      send: async () => {
        sent++;
        return { status: 200, headers: {}, attempts: 1, body: { data: {} } };
      },
    } as unknown as ApiClient;
    // The signal arrives while the run is still getting ready (credentials, then reading the file).
    const api = async () => {
      io.sendSignal('SIGTERM');
      return client;
    };
    const outcome = await runSinglePush(
      {
        kind: 'loan',
        input: 'loans.csv',
        mappingPath: 'mapping.json',
        rejectsPath: join(mkdtempSync(join(tmpdir(), 'leadctl-single-')), 'rejects.csv'),
        concurrency: 2,
        validateOnly: false,
      },
      environment(io, api),
    );
    expect(outcome.exitCode).toBe(143);
    expect(outcome.summary.status).toBe('interrupted');
    expect(sent).toBe(0);
    const loans = outcome.summary.loans;
    expect(loans.not_sent).toBe(loans.valid);
    expect(loans.not_sent).toBeGreaterThan(0);
    expect(loans.read).toBe(loans.accepted + loans.rejected + loans.duplicates + loans.not_sent);
  });
});
