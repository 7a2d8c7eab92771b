import * as whole from 'undici';
import { describe, expect, it } from 'vitest';
import { Agent, errors, ProxyAgent, request } from '../../../src/api/undici.js';

// src/api/undici.ts imports undici's files one by one (its index costs twice the start-up): an
// undici whose files moved fails here, not in a user's run.
describe("undici's parts, imported file by file", () => {
  it('are the classes its index exports', () => {
    expect(Agent).toBe(whole.Agent);
    expect(ProxyAgent).toBe(whole.ProxyAgent);
    expect(errors).toBe(whole.errors);
  });

  it('give every dispatcher the request and connect methods its index gives them', () => {
    const agent = new Agent();
    expect(typeof agent.request).toBe('function');
    expect(typeof agent.connect).toBe('function');
    return agent.close();
  });

  it('request splits the URL as undici does: origin, path with its query, GET by default', async () => {
    const seen: unknown[] = [];
    const dispatcher = new Agent();
    dispatcher.request = ((options: unknown) => {
      seen.push(options);
      return Promise.resolve({ statusCode: 204 });
    }) as typeof dispatcher.request;
    await request('http://127.0.0.1:9/a/b%20c?x=1&y=2', { dispatcher, headers: { h: '1' } });
    await request(new URL('http://127.0.0.1:9/p'), { dispatcher, method: 'POST', body: '{}' });
    expect(seen).toEqual([
      { origin: 'http://127.0.0.1:9', path: '/a/b%20c?x=1&y=2', method: 'GET', headers: { h: '1' } },
      { origin: 'http://127.0.0.1:9', path: '/p', method: 'POST', body: '{}' },
    ]);
    await dispatcher.close();
  });
});
