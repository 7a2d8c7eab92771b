import { describe, expect, it } from 'vitest';
import { isLoopbackHost } from '../../../src/api/loopback.js';

describe('isLoopbackHost', () => {
  it('knows 127.0.0.0/8, ::1 in its spellings, IPv4-mapped 127/8, localhost and its subdomains', () => {
    for (const host of [
      '127.0.0.1',
      '127.1.2.3',
      '[::1]',
      '::1',
      '[0:0:0:0:0:0:0:1]',
      '::ffff:127.0.0.1',
      '[::FFFF:127.9.9.9]',
      'localhost',
      'LocalHost',
      'api.localhost',
    ])
      expect(isLoopbackHost(host), host).toBe(true);
  });

  it('everything else leaves the machine', () => {
    for (const host of [
      '128.0.0.1',
      '10.127.0.1',
      '1127.0.0.1',
      '::2',
      '::ffff:10.0.0.1',
      '::ffff:128.0.0.1',
      'fe80::1',
      'localhost.example.com',
      'notlocalhost',
      '127.example.com',
      '[::1',
      '::1]',
      '[127.0.0.1]',
      '',
    ])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});
