import { describe, expect, it } from 'vitest';
import { resolveCredentials, requireUsableCredentials } from '../../../src/config/credentials.js';
import type { ConfigData } from '../../../src/config/profiles.js';
import { UsageError } from '../../../src/errors.js';

const data: ConfigData = {
  current_profile: 'work',
  profiles: {
    work: { base_url: 'https://work.example', client_id: 'work-id', client_secret: 'work-secret' },
    other: { base_url: 'http://127.0.0.1:9000', client_id: 'other-id' },
  },
};

describe('resolveCredentials', () => {
  it('uses the current profile, saying so', () => {
    const r = resolveCredentials({}, {}, data);
    expect(r.profile).toEqual({ value: 'work', source: 'profile' });
    expect(r.baseUrl).toEqual({ value: 'https://work.example', source: 'profile' });
    expect(r.clientId).toEqual({ value: 'work-id', source: 'profile' });
    expect(r.clientSecret).toEqual({ value: 'work-secret', source: 'profile' });
    expect(r.usesProfileToken).toBe(true);
  });

  it('lets the environment win over the profile, and flags over both', () => {
    const env = {
      LEADCTL_BASE_URL: 'https://env.example',
      LEADCTL_CLIENT_ID: 'env-id',
      LEADCTL_CLIENT_SECRET: 'env-secret',
      LEADCTL_PROFILE: 'other',
    };
    const r = resolveCredentials({}, env, data);
    expect(r.profile).toEqual({ value: 'other', source: 'environment' });
    expect(r.baseUrl).toEqual({ value: 'https://env.example', source: 'environment' });
    expect(r.clientId).toEqual({ value: 'env-id', source: 'environment' });
    expect(r.clientSecret).toEqual({ value: 'env-secret', source: 'environment' });
    expect(r.usesProfileToken).toBe(false);
    const f = resolveCredentials(
      { profile: 'work', baseUrl: 'https://flag.example', clientId: 'flag-id', clientSecret: 'flag-secret' },
      env,
      data,
    );
    expect(f.profile.source).toBe('flag');
    expect(f.baseUrl).toEqual({ value: 'https://flag.example', source: 'flag' });
    expect(f.clientId).toEqual({ value: 'flag-id', source: 'flag' });
    expect(f.clientSecret).toEqual({ value: 'flag-secret', source: 'flag' });
  });

  it("never pairs the profile's secret with another client id", () => {
    const r = resolveCredentials({}, { LEADCTL_CLIENT_ID: 'someone-else' }, data);
    expect(r.clientId?.value).toBe('someone-else');
    expect(r.clientSecret).toBeUndefined();
  });

  it('works from the environment alone, with no config at all', () => {
    const env = {
      LEADCTL_BASE_URL: 'http://127.0.0.1:1234/',
      LEADCTL_CLIENT_ID: 'id',
      LEADCTL_CLIENT_SECRET: 'secret',
    };
    const r = resolveCredentials({}, env, { profiles: {} });
    expect(r.profile).toEqual({ value: 'default', source: 'default' });
    expect(r.baseUrl.value).toBe('http://127.0.0.1:1234');
    expect(r.clientSecret?.value).toBe('secret');
    expect(r.stored).toBeUndefined();
  });

  it('defaults a new profile to the production URL', () => {
    expect(resolveCredentials({}, {}, { profiles: {} }).baseUrl).toEqual({
      value: 'https://api.decisioncloud.me',
      source: 'default',
    });
  });

  it('treats empty environment variables as unset', () => {
    const r = resolveCredentials({}, { LEADCTL_CLIENT_ID: '', LEADCTL_PROFILE: ' ' }, data);
    expect(r.clientId?.source).toBe('profile');
    expect(r.profile.value).toBe('work');
  });

  it('refuses an insecure base URL, naming its origin', () => {
    expect(() => resolveCredentials({}, { LEADCTL_BASE_URL: 'http://example.com' }, data)).toThrow(/LEADCTL_BASE_URL/);
    expect(() => resolveCredentials({ baseUrl: 'http://example.com' }, {}, data)).toThrow(/--base-url/);
  });

  it('refuses a badly named profile', () => {
    expect(() => resolveCredentials({ profile: '../etc' }, {}, data)).toThrow(UsageError);
  });

  it('requires a named profile to exist unless the environment provides credentials', () => {
    expect(() => requireUsableCredentials(resolveCredentials({ profile: 'nope' }, {}, data))).toThrow(
      /no profile named "nope"/,
    );
    expect(() =>
      requireUsableCredentials(resolveCredentials({ profile: 'nope' }, { LEADCTL_CLIENT_ID: 'x' }, data)),
    ).not.toThrow();
  });
});
