import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';
import { http } from './support.js';

async function firstLine(read: () => string): Promise<string> {
  for (let i = 0; i < 200; i++) {
    const text = read();
    if (text.includes('\n')) return text.split('\n')[0]!;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`no line printed; got: ${read()}`);
}

describe('sandbox start, in process', () => {
  it('prints its JSON line, serves, and returns 0 when signalled', async () => {
    const io = memoryIO();
    const exit = main(
      [
        '--output',
        'json',
        'sandbox',
        'start',
        '--memory',
        '--port',
        '0',
        '--client-id',
        'in-process',
        '--client-secret',
        'InProcessSecret1',
      ],
      io,
    );
    const line = JSON.parse(await firstLine(io.stdoutText));
    expect(Object.keys(line).sort()).toEqual(['admin_token', 'base_url', 'campaigns', 'client_id', 'client_secret']);
    expect(line.client_id).toBe('in-process');
    for (const campaign of line.campaigns) expect(Object.keys(campaign).sort()).toEqual(['api_key', 'price_reject']);
    const token = await http(line.base_url, 'POST', '/oauth/token', {
      body: new URLSearchParams({
        grant_type: 'client_credentials',
        client_id: 'in-process',
        client_secret: 'InProcessSecret1',
      }).toString(),
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    expect(token.status).toBe(200);
    expect(io.stderrText()).not.toMatch(/not a loopback address/);
    io.sendSignal('SIGINT');
    expect(await exit).toBe(0);
    await expect(fetch(`${line.base_url}/_sandbox/stats`)).rejects.toThrow();
  });

  it('warns on stderr, naming what becomes reachable, when it listens beyond loopback', async () => {
    const io = memoryIO();
    const exit = main(['--output', 'json', 'sandbox', 'start', '--memory', '--host', '0.0.0.0', '--port', '0'], io);
    const line = JSON.parse(await firstLine(io.stdoutText));
    const warning = io.stderrText();
    expect(warning).toMatch(/^Warning: the sandbox listens on 0\.0\.0\.0, not a loopback address/m);
    for (const reachable of ['token endpoint', '/api', 'legacy lead post', '/_sandbox admin endpoints', 'plain http'])
      expect(warning).toContain(reachable);
    expect(warning).toContain('--host 127.0.0.1');
    expect(warning).not.toContain(line.client_secret);
    // It serves; traffic goes to loopback only.
    const port = new URL(line.base_url).port;
    const stats = await http(`http://127.0.0.1:${port}`, 'GET', '/_sandbox/stats', {
      headers: { authorization: `Bearer ${line.admin_token}` },
    });
    expect(stats.status).toBe(200);
    io.sendSignal('SIGTERM');
    expect(await exit).toBe(0);
  });

  it('prints a readable summary for people', async () => {
    const io = memoryIO();
    const exit = main(['--output', 'table', 'sandbox', 'start', '--memory'], io);
    await firstLine(io.stdoutText);
    await new Promise((r) => setTimeout(r, 50));
    io.sendSignal('SIGTERM');
    expect(await exit).toBe(0);
    const text = io.stdoutText();
    expect(text).toMatch(/^Sandbox listening on http:\/\/127\.0\.0\.1:\d+$/m);
    expect(text).toMatch(/^Client secret: +[A-Za-z0-9]{40}$/m);
    expect(text).toMatch(/^Admin token: +[A-Za-z0-9]{40} \(for \/_sandbox\/\*\)$/m);
    expect(text.match(/^Campaign: .* api_key [A-Za-z0-9]{40}$/gm)).toHaveLength(2);
  });
});
