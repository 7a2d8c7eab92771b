import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClientCredentials } from 'simple-oauth2';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { adminHeaders, startSandboxInProcess, startSandboxProcess } from '../helpers/sandbox.js';
import type { TestSandbox } from '../helpers/sandbox.js';
import { http } from './support.js';

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const formHeaders = { 'Content-Type': 'application/x-www-form-urlencoded' };

describe('POST /oauth/token', () => {
  let sb: TestSandbox;
  beforeAll(async () => {
    sb = await startSandboxInProcess();
  });
  afterAll(() => sb.stop());

  it('issues an HS256 JWT for a standard OAuth 2.0 client using HTTP Basic client authentication', async () => {
    const client = new ClientCredentials({
      client: { id: sb.clientId, secret: sb.clientSecret },
      auth: { tokenHost: sb.baseUrl, tokenPath: '/oauth/token' },
      options: { authorizationMethod: 'header' },
    });
    const accessToken = await client.getToken({});
    expect(accessToken.token.token_type).toBe('Bearer');
    expect(accessToken.token.expires_in).toBe(3600);
    expect(accessToken.expired()).toBe(false);
    const jwt = accessToken.token.access_token as string;
    expect(decodeProtectedHeader(jwt).alg).toBe('HS256');
    expect(decodeJwt(jwt).sub).toBe(sb.clientId);
    const systems = await http(sb.baseUrl, 'GET', '/api/v1/resources/management-systems', { token: jwt });
    expect(systems.status).toBe(200);
  });

  it('accepts client credentials in the form body', async () => {
    const res = await http(sb.baseUrl, 'POST', '/oauth/token', {
      body: form({ grant_type: 'client_credentials', client_id: sb.clientId, client_secret: sb.clientSecret }),
      headers: formHeaders,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(res.body.access_token.split('.')).toHaveLength(3);
    expect(res.headers.get('cache-control')).toBe('no-store');
  });

  it('answers 401 invalid_client for a wrong secret or an unknown client', async () => {
    for (const fields of [
      { grant_type: 'client_credentials', client_id: sb.clientId, client_secret: sb.clientSecret + 'x' },
      { grant_type: 'client_credentials', client_id: 'no-such-client', client_secret: sb.clientSecret },
    ]) {
      const res = await http(sb.baseUrl, 'POST', '/oauth/token', { body: form(fields), headers: formHeaders });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe('invalid_client');
      expect(res.body.message).toEqual(expect.any(String));
    }
  });

  it('answers 401 invalid_client with a Basic challenge when HTTP Basic credentials are wrong', async () => {
    const basic = Buffer.from(`${sb.clientId}:wrong-secret`).toString('base64');
    const res = await http(sb.baseUrl, 'POST', '/oauth/token', {
      body: form({ grant_type: 'client_credentials' }),
      headers: { ...formHeaders, Authorization: `Basic ${basic}` },
    });
    expect(res.status).toBe(401);
    expect(res.body.error).toBe('invalid_client');
    expect(res.headers.get('www-authenticate')).toMatch(/^Basic/);
  });

  it('answers 400 unsupported_grant_type for another grant', async () => {
    const res = await http(sb.baseUrl, 'POST', '/oauth/token', {
      body: form({ grant_type: 'password', client_id: sb.clientId, client_secret: sb.clientSecret }),
      headers: formHeaders,
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('unsupported_grant_type');
  });

  it('answers 400 invalid_request when a field is missing', async () => {
    const missingOne: Record<string, string>[] = [
      { client_id: sb.clientId, client_secret: sb.clientSecret },
      { grant_type: 'client_credentials', client_secret: sb.clientSecret },
      { grant_type: 'client_credentials', client_id: sb.clientId },
    ];
    for (const fields of missingOne) {
      const res = await http(sb.baseUrl, 'POST', '/oauth/token', { body: form(fields), headers: formHeaders });
      expect(res.status).toBe(400);
      expect(res.body.error).toBe('invalid_request');
      expect(res.body.hint).toMatch(/grant_type|client_id|client_secret/);
    }
  });

  it('answers 400 invalid_scope when the request names a scope', async () => {
    const res = await http(sb.baseUrl, 'POST', '/oauth/token', {
      body: form({
        grant_type: 'client_credentials',
        client_id: sb.clientId,
        client_secret: sb.clientSecret,
        scope: 'dry-run',
      }),
      headers: formHeaders,
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      error: 'invalid_scope',
      error_description: expect.any(String),
      hint: expect.stringContaining('dry-run'),
      message: expect.any(String),
    });
  });
});

describe('bearer tokens on /api/v1', () => {
  it('refuses missing, malformed, badly signed, expired and rotated tokens with 401 Unauthenticated.', async () => {
    const sb = await startSandboxInProcess({ tokenTtl: 60 });
    try {
      const path = '/api/v1/resources/management-systems';
      const tokenRes = await http(sb.baseUrl, 'POST', '/oauth/token', {
        body: form({ grant_type: 'client_credentials', client_id: sb.clientId, client_secret: sb.clientSecret }),
        headers: formHeaders,
      });
      expect(tokenRes.body.expires_in).toBe(60);
      const token: string = tokenRes.body.access_token;
      expect((await http(sb.baseUrl, 'GET', path, { token })).status).toBe(200);

      const [h, p, s] = token.split('.');
      const badSignature = `${h}.${p}.${s!.slice(0, -4)}${s!.slice(-4) === 'AAAA' ? 'BBBB' : 'AAAA'}`;
      for (const bad of [undefined, 'not-a-jwt', badSignature]) {
        const res = await http(sb.baseUrl, 'GET', path, { token: bad });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ message: 'Unauthenticated.' });
      }

      // Expiry: move the sandbox clock past the token's lifetime.
      expect(
        (
          await http(sb.baseUrl, 'POST', '/_sandbox/clock', {
            body: { advance_seconds: 61 },
            headers: adminHeaders(sb),
          })
        ).status,
      ).toBe(200);
      const expired = await http(sb.baseUrl, 'GET', path, { token });
      expect(expired.status).toBe(401);
      expect(expired.body).toEqual({ message: 'Unauthenticated.' });

      // Rotation: a token issued before the rotation is refused, the new secret works.
      const fresh = await http(sb.baseUrl, 'POST', '/oauth/token', {
        body: form({ grant_type: 'client_credentials', client_id: sb.clientId, client_secret: sb.clientSecret }),
        headers: formHeaders,
      });
      expect((await http(sb.baseUrl, 'GET', path, { token: fresh.body.access_token })).status).toBe(200);
      const secretBefore = sb.clientSecret;
      const rotated = await http(sb.baseUrl, 'POST', '/_sandbox/rotate-secret', { headers: adminHeaders(sb) });
      expect(rotated.status).toBe(200);
      expect(rotated.body.client_secret).toMatch(/^[A-Za-z0-9]{40}$/);
      expect(rotated.body.client_secret).not.toBe(secretBefore);
      expect((await http(sb.baseUrl, 'GET', path, { token: fresh.body.access_token })).status).toBe(401);
      const oldSecret = await http(sb.baseUrl, 'POST', '/oauth/token', {
        body: form({ grant_type: 'client_credentials', client_id: sb.clientId, client_secret: secretBefore }),
        headers: formHeaders,
      });
      expect(oldSecret.status).toBe(401);
      const afterRotation = await http(sb.baseUrl, 'POST', '/oauth/token', {
        body: form({
          grant_type: 'client_credentials',
          client_id: sb.clientId,
          client_secret: rotated.body.client_secret,
        }),
        headers: formHeaders,
      });
      expect(afterRotation.status).toBe(200);
      expect((await http(sb.baseUrl, 'GET', path, { token: afterRotation.body.access_token })).status).toBe(200);
    } finally {
      await sb.stop();
    }
  });
});

describe('leadctl sandbox start (the binary)', () => {
  it('prints one JSON line with base URL, credentials and campaign keys, serves, and stops on SIGTERM', async () => {
    const sb = await startSandboxProcess(['--client-id', 'test-client', '--client-secret', 'S3cretS3cretS3cret']);
    try {
      expect(sb.baseUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(sb.clientId).toBe('test-client');
      expect(sb.clientSecret).toBe('S3cretS3cretS3cret');
      expect(sb.campaigns).toHaveLength(2);
      expect(sb.campaigns.map((c) => c.price_reject).sort()).toEqual([false, true]);
      const res = await http(sb.baseUrl, 'POST', '/oauth/token', {
        body: form({ grant_type: 'client_credentials', client_id: 'test-client', client_secret: 'S3cretS3cretS3cret' }),
        headers: formHeaders,
      });
      expect(res.status).toBe(200);
      expect((await sb.stats()).tokens).toBe(1);
    } finally {
      await sb.stop();
    }
    expect(sb.process.exitCode).toBe(0);
  });

  it('prints default credentials of the documented form', async () => {
    const sb = await startSandboxProcess();
    try {
      expect(sb.clientId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(sb.clientSecret).toMatch(/^[A-Za-z0-9]{40}$/);
    } finally {
      await sb.stop();
    }
  });
});
