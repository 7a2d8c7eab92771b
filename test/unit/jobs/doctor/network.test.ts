import { describe, expect, it } from 'vitest';
import { routeFor, showProxy } from '../../../../src/jobs/doctor/network.js';

describe('the route doctor reports is the client’s (src/api/dispatcher.ts), with the reason in words', () => {
  const url = new URL('https://api.example.com');
  it('names the proxy’s variable: lower case first, HTTPS_PROXY else HTTP_PROXY for https', () => {
    expect(routeFor(url, {})).toEqual({ direct: 'no proxy variable is set' });
    expect(routeFor(url, { HTTPS_PROXY: 'http://a:1', https_proxy: 'http://b:2' }).proxy).toMatchObject({
      variable: 'https_proxy',
      shown: 'http://b:2',
    });
    expect(routeFor(url, { HTTP_PROXY: 'proxy.example:3128' }).proxy).toMatchObject({
      variable: 'HTTP_PROXY',
      shown: 'http://proxy.example:3128',
    });
  });

  it('says why a connection is direct: NO_PROXY, loopback, plain http', () => {
    const env = { HTTPS_PROXY: 'http://p:3128' };
    expect(routeFor(url, { ...env, NO_PROXY: '.example.com' })).toMatchObject({
      direct: 'api.example.com is exempted by NO_PROXY (.example.com)',
      configured: { variable: 'HTTPS_PROXY' },
    });
    expect(routeFor(url, { ...env, no_proxy: '*' }).direct).toContain('exempted by NO_PROXY (*)');
    expect(routeFor(url, { ...env, NO_PROXY: 'api.example.com:8443' }).proxy).toBeDefined();
    expect(routeFor(new URL('https://127.0.0.2:8443'), env).direct).toBe(
      '127.0.0.2 is a loopback address, always reached directly',
    );
    expect(routeFor(new URL('http://localhost:3000'), env).direct).toBe(
      'plain http is never proxied (it only goes to this machine)',
    );
  });

  it('a proxy variable that is not a proxy URL is reported with the client’s message, not thrown', () => {
    const route = routeFor(url, { HTTPS_PROXY: 'ftp://proxy:21' });
    expect(route.invalid?.message).toContain('(from HTTPS_PROXY) is not a valid proxy URL');
    expect(route.invalid?.hint).toContain('unset it');
  });

  it('shows a proxy without its credentials, and says it has some', () => {
    const { proxy } = routeFor(url, { HTTPS_PROXY: 'http://user:pa55word@proxy:3128' });
    expect(showProxy(proxy!)).toBe('http://proxy:3128 (with credentials, not shown)');
  });
});
