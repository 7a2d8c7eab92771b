import type { ApiClient } from '../../src/api/client.js';
import type { BatchPushRequest, PushEnvironment } from '../../src/jobs/push/batch.js';
import type { PushEvent } from '../../src/jobs/push/progress.js';
import type { MemoryIO } from './memory-io.js';

/** A batch endpoint in memory for in-process tests of `customers batch`: records bodies, answers as told. */

export interface FakeOptions {
  /** Answer for the n-th batch request (0-based): 'ok', a skipped list, or an error to throw. */
  answer?: (
    n: number,
    body: { customers: { customer_id: string }[] },
  ) => 'ok' | { skipped: { path: string; id: string | null; errors: string[] }[] } | Error | Promise<'ok'>;
}

export function fakeClient(options: FakeOptions = {}) {
  const bodies: { customers: { customer_id: string; loans: { loan_id: string; payments: unknown[] }[] }[] }[] = [];
  let n = 0;
  const client = {
    async checkCredentials() {
      return { accessToken: 't', obtainedAt: 0, expiresAt: 1e15 };
    },
    async send(spec: { body: () => AsyncIterable<string>; signal?: AbortSignal }) {
      let text = '';
      for await (const part of spec.body()) text += part;
      const body = JSON.parse(text);
      const i = n++;
      const answer = (await options.answer?.(i, body)) ?? 'ok';
      if (answer instanceof Error) throw answer;
      bodies.push(body);
      const skipped = answer === 'ok' ? [] : answer.skipped;
      return {
        status: 200,
        headers: {},
        attempts: 1,
        body: { data: { accepted: { customers: 0, loans: 0, payments: 0 }, skipped } },
      };
    },
  };
  return { client: client as unknown as ApiClient, bodies };
}

export function environment(io: MemoryIO, client: ApiClient, events: PushEvent[] = []): PushEnvironment {
  return {
    io,
    target: async () => ({ profile: 'default', baseUrl: 'http://127.0.0.1:9' }),
    api: async () => client,
    onEvent: (e) => events.push(e),
    warn: () => undefined,
    stopGraceMs: 2000,
  };
}

export function request(overrides: Partial<BatchPushRequest>): BatchPushRequest {
  return {
    inputs: [],
    chunkSize: 1000,
    maxBytes: 8 * 1024 * 1024,
    concurrency: 4,
    validateOnly: false,
    resume: false,
    ...overrides,
  };
}
