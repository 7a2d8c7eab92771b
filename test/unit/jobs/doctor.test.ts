import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bytes, CHECK_NAMES, doctorExitCode, duration, fail, ok, skip, warn } from '../../../src/jobs/doctor/check.js';
import { routeFor } from '../../../src/jobs/doctor/network.js';
import { checkCronPath, findOnPath, LEADCTL_BIN, supportedNode } from '../../../src/jobs/doctor/runtime.js';
import { CHECK_LABELS, DoctorText, wantsUnicode } from '../../../src/output/doctor.js';

const work = mkdtempSync(join(tmpdir(), 'leadctl-doctor-unit-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the exit code of a doctor run', () => {
  it('is 0 with warnings and skips, else the largest failure code', () => {
    expect(doctorExitCode([ok('runtime', ''), warn('proxy', '', 'h'), skip('tls', '')])).toBe(0);
    expect(doctorExitCode([fail('clock', '', null, 2), fail('token', '', null, 3)])).toBe(3);
    expect(doctorExitCode([fail('token', '', null, 3), fail('dns', '', null, 5), fail('clock', '', null, 2)])).toBe(5);
  });
});

describe('words', () => {
  it('durations and sizes for people', () => {
    expect(duration(3_400)).toBe('3 s');
    expect(duration(-250_000)).toBe('4 min 10 s');
    expect(duration(5 * 3600_000 + 2 * 60_000)).toBe('5 h 2 min');
    expect(duration(3600_000)).toBe('1 h');
    expect(duration(5 * 3600_000 - 900)).toBe('5 h');
    expect(duration(86_400_000 * 3.5)).toBe('3 days');
    expect(bytes(512)).toBe('512 bytes');
    expect(bytes(1536 * 1024 * 1024)).toBe('1.5 GB');
    expect(bytes(75 * 1024 ** 3)).toBe('75 GB');
  });
});

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

describe('runtime and cron PATH', () => {
  it('supports Node 22.13+ and 24+, as bin/leadctl.js does', () => {
    expect(['v20.20.2', 'v22.12.0', 'v23.11.0'].map(supportedNode)).toEqual([false, false, false]);
    expect(['v22.13.0', 'v22.20.1', 'v24.0.0', 'v25.1.0'].map(supportedNode)).toEqual([true, true, true, true]);
  });

  it('finds executables on a PATH the way a shell does (first folder first, executables only)', () => {
    const a = join(work, 'a');
    const b = join(work, 'b');
    mkdirSync(a);
    mkdirSync(b);
    writeFileSync(join(a, 'tool'), '#!/bin/sh\n');
    chmodSync(join(a, 'tool'), 0o644);
    writeFileSync(join(b, 'tool'), '#!/bin/sh\n');
    chmodSync(join(b, 'tool'), 0o755);
    mkdirSync(join(a, 'dir-named-tool'));
    expect(findOnPath('tool', `${a}:${b}`)).toBe(join(b, 'tool'));
    expect(findOnPath('dir-named-tool', a)).toBeUndefined();
  });

  it('cron PATH: ok with this leadctl and a supported node; else a warning with the full command', () => {
    const dir = join(work, 'cron');
    mkdirSync(dir);
    const none = checkCronPath(dir, undefined);
    expect(none).toMatchObject({ status: 'warn', value: `cron's PATH ${dir} finds no leadctl and no node` });
    expect(none.hint).toContain(`${process.execPath} ${LEADCTL_BIN} …`);
    symlinkSync(process.execPath, join(dir, 'node'));
    symlinkSync(LEADCTL_BIN, join(dir, 'leadctl'));
    expect(checkCronPath(dir, undefined)).toMatchObject({
      status: 'ok',
      value: `cron's PATH ${dir} finds leadctl at ${join(dir, 'leadctl')} and node ${process.version} at ${join(dir, 'node')}`,
    });
  });
});

describe('the text for people', () => {
  it('UTF-8 marks unless the locale names another charset', () => {
    expect(wantsUnicode({})).toBe(true);
    expect(wantsUnicode({ LANG: 'en_US.UTF-8' })).toBe(true);
    expect(wantsUnicode({ LANG: 'C.utf8' })).toBe(true);
    expect(wantsUnicode({ LANG: 'C' })).toBe(false);
    expect(wantsUnicode({ LC_ALL: 'POSIX', LANG: 'en_US.UTF-8' })).toBe(false);
    expect(wantsUnicode({ LC_CTYPE: 'de_DE.ISO-8859-1' })).toBe(false);
  });

  it('every check has its label', () => {
    expect(Object.keys(CHECK_LABELS)).toEqual([...CHECK_NAMES]);
  });

  it('one line a check, the hint indented under the value; colour only on the mark', () => {
    const text = new DoctorText(false, true);
    expect(text.line(fail('clock', 'clock 5 h ahead of the service', 'set the clock', 2))).toBe(
      '✗ clock          clock 5 h ahead of the service\n                 hint: set the clock\n',
    );
    const ascii = new DoctorText(false, false);
    expect(ascii.line(warn('proxy', 'v', 'h'))).toBe('WARN proxy          v\n                    hint: h\n');
    const colour = new DoctorText(true, true).line(ok('token', 'a token came back'));
    expect(colour).toContain('token          a token came back');
    expect(colour.startsWith('\u001b[')).toBe(true);
  });
});
