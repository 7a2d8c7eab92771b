import { describe, expect, it } from 'vitest';
import { isLoopbackHost, normalizeBaseUrl } from '../../../src/config/base-url.js';
import { UsageError } from '../../../src/errors.js';

describe('normalizeBaseUrl', () => {
  it('accepts https anywhere and drops the trailing slash', () => {
    expect(normalizeBaseUrl('https://api.decisioncloud.me/', 'test')).toBe('https://api.decisioncloud.me');
    expect(normalizeBaseUrl(' https://h.example/base/ ', 'test')).toBe('https://h.example/base');
  });
  it('accepts plain http on loopback only', () => {
    expect(normalizeBaseUrl('http://127.0.0.1:8080', 'test')).toBe('http://127.0.0.1:8080');
    expect(normalizeBaseUrl('http://127.1.2.3:1', 'test')).toBe('http://127.1.2.3:1');
    expect(normalizeBaseUrl('http://localhost:3000', 'test')).toBe('http://localhost:3000');
    expect(normalizeBaseUrl('http://[::1]:3000', 'test')).toBe('http://[::1]:3000');
  });
  it('refuses plain http elsewhere, naming where the URL came from', () => {
    expect(() => normalizeBaseUrl('http://api.decisioncloud.me', 'LEADCTL_BASE_URL')).toThrow(UsageError);
    expect(() => normalizeBaseUrl('http://10.0.0.1', 'LEADCTL_BASE_URL')).toThrow(/LEADCTL_BASE_URL.*must use https/);
    expect(() => normalizeBaseUrl('http://128.0.0.1', 'x')).toThrow(/https/);
  });
  it('refuses non-URLs, other schemes, embedded credentials and queries', () => {
    expect(() => normalizeBaseUrl('api.decisioncloud.me', 'x')).toThrow(/not a valid URL/);
    expect(() => normalizeBaseUrl('ftp://h', 'x')).toThrow(/https/);
    expect(() => normalizeBaseUrl('https://u:p@h', 'x')).toThrow(/user name or password/);
    expect(() => normalizeBaseUrl('https://h/?a=1', 'x')).toThrow(/query/);
  });
  it('never repeats a password or query it refuses in the message', () => {
    const messageOf = (raw: string) => {
      try {
        normalizeBaseUrl(raw, 'x');
      } catch (error) {
        return `${(error as UsageError).message} ${(error as UsageError).hint ?? ''}`;
      }
      throw new Error(`${raw} was accepted`);
    };
    for (const raw of [
      'http://ops:Pa55word@example.com',
      'ftp://ops:Pa55word@h',
      'http://example.com/?token=Pa55word',
      'https://h/#Pa55word',
    ]) {
      expect(messageOf(raw)).not.toContain('Pa55word');
    }
    expect(messageOf('http://ops:Pa55word@example.com')).toMatch(/user name or password/);
    expect(messageOf('http://example.com/base?token=Pa55word')).toContain('"http://example.com/base"');
  });
});

describe('isLoopbackHost', () => {
  it('knows 127.0.0.0/8, ::1 and localhost', () => {
    expect(['127.0.0.1', '127.255.0.9', '[::1]', 'localhost', 'LOCALHOST'].every(isLoopbackHost)).toBe(true);
    expect(['10.0.0.1', '::2', 'localhost.example.com', '1127.0.0.1'].some(isLoopbackHost)).toBe(false);
  });
});
