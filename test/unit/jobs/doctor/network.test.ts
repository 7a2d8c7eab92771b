import { describe, expect, it } from 'vitest';
import { routeFor } from '../../../../src/jobs/doctor/network.js';

describe('which proxy the client takes (undici EnvHttpProxyAgent, as src/api/client.ts sets it up)', () => {
  const url = new URL('https://api.example.com');
  it('names the variable: lower case first, HTTPS_PROXY else HTTP_PROXY for https', () => {
    expect(routeFor(url, {})).toMatchObject({ direct: 'no proxy variable is set' });
    expect(routeFor(url, { HTTPS_PROXY: 'http://a:1', https_proxy: 'http://b:2' })).toMatchObject({
      variable: 'https_proxy',
    });
    expect(routeFor(url, { HTTP_PROXY: 'http://p:3128' })).toMatchObject({ variable: 'HTTP_PROXY' });
    expect(routeFor(url, { HTTP_PROXY: 'http://p:3128' }).proxy?.href).toBe('http://p:3128/');
  });
  it('NO_PROXY: exact hosts, parent domains, leading dots and *., ports; loopback always direct', () => {
    const env = { HTTPS_PROXY: 'http://p:3128' };
    expect(routeFor(url, { ...env, NO_PROXY: 'example.com' }).direct).toBe(
      'api.example.com is in NO_PROXY (example.com)',
    );
    expect(routeFor(url, { ...env, no_proxy: '.example.com' }).direct).toContain('in no_proxy');
    expect(routeFor(url, { ...env, NO_PROXY: '*.example.com' }).direct).toContain('(*.example.com)');
    expect(routeFor(url, { ...env, NO_PROXY: 'api.example.com:8443' }).proxy).toBeDefined();
    expect(routeFor(url, { ...env, NO_PROXY: 'api.example.com:443' }).direct).toBeDefined();
    expect(routeFor(url, { ...env, NO_PROXY: 'other.com notexample.com' }).proxy).toBeDefined();
    expect(routeFor(new URL('https://127.0.0.1:8443'), env).direct).toBe(
      '127.0.0.1 is a loopback address, always reached directly',
    );
    expect(routeFor(new URL('http://localhost:3000'), env).direct).toContain('loopback');
  });
  it('a proxy variable that is not a URL is reported, not thrown', () => {
    expect(routeFor(url, { HTTPS_PROXY: 'not a url' })).toMatchObject({ invalid: { variable: 'HTTPS_PROXY' } });
  });
});
