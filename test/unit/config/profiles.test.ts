import { spawn } from 'node:child_process';
import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  existsSync,
  readdirSync,
  utimesSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { openProfileStore } from '../../../src/config/profiles.js';
import { UsageError } from '../../../src/errors.js';

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'leadctl-profiles-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const mode = (p: string) => statSync(p).mode & 0o777;

describe('ProfileStore', () => {
  it('reads an absent file as empty without creating anything', async () => {
    const dir = join(tempDir(), 'leadctl');
    const store = await openProfileStore(dir);
    expect(store.read()).toEqual({ profiles: {} });
    expect(existsSync(dir)).toBe(false);
  });

  it('writes config.json with mode 0600 in a 0700 folder', async () => {
    const dir = join(tempDir(), 'nested', 'leadctl');
    const store = await openProfileStore(dir);
    store.saveProfile('default', { base_url: 'https://h', client_id: 'id', client_secret: 'sec' });
    expect(store.path).toBe(join(dir, 'config.json'));
    expect(mode(store.path)).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
    expect(JSON.parse(readFileSync(store.path, 'utf8'))).toEqual({
      current_profile: 'default',
      profiles: { default: { base_url: 'https://h', client_id: 'id', client_secret: 'sec' } },
    });
    expect(readdirSync(dir)).toEqual(['config.json']);
  });

  it('repairs loose modes on the next write', async () => {
    const dir = join(tempDir(), 'leadctl');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: { a: { base_url: 'https://a' } } }));
    chmodSync(join(dir, 'config.json'), 0o644);
    const store = await openProfileStore(dir);
    expect(store.profile('a')).toEqual({ base_url: 'https://a' });
    store.saveToken('a', {
      access_token: 't',
      expires_at: 'e',
      obtained_at: 'o',
      client_id: 'c',
      base_url: 'https://a',
    });
    expect(mode(store.path)).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
  });

  it('tightens a loosely readable file as soon as it reads it', async () => {
    const dir = join(tempDir(), 'leadctl');
    mkdirSync(dir);
    chmodSync(dir, 0o755);
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ profiles: {} }), { mode: 0o644 });
    chmodSync(join(dir, 'config.json'), 0o644);
    (await openProfileStore(dir)).read();
    expect(mode(join(dir, 'config.json'))).toBe(0o600);
    expect(mode(dir)).toBe(0o700);
  });

  it('waits for a held lock, gives up with a message, and takes over a stale one', async () => {
    const { withFileLock } = await import('../../../src/config/lock.js');
    const lock = join(tempDir(), 'config.json.lock');
    expect(() => withFileLock(lock, () => withFileLock(lock, () => 1, 100))).toThrow(
      /locked by another leadctl process/,
    );
    expect(existsSync(lock)).toBe(false);
    writeFileSync(lock, '99999\n');
    const old = new Date(Date.now() - 60_000);
    utimesSync(lock, old, old);
    expect(withFileLock(lock, () => 'ran', 100)).toBe('ran');
    expect(existsSync(lock)).toBe(false);
  });

  it('forgets secrets and tokens but keeps the rest; removes profiles', async () => {
    const store = await openProfileStore(join(tempDir(), 'leadctl'));
    store.saveProfile('p', {
      base_url: 'https://h',
      client_id: 'id',
      client_secret: 's',
      token: { access_token: 't', expires_at: 'e', obtained_at: 'o', client_id: 'id', base_url: 'https://h' },
    });
    store.saveProfile('q', { base_url: 'https://q' });
    expect(store.forgetSecrets('p')).toBe(true);
    expect(store.profile('p')).toEqual({ base_url: 'https://h', client_id: 'id' });
    expect(store.forgetSecrets('missing')).toBe(false);
    expect(store.removeProfile('p')).toBe(true);
    expect(store.read()).toEqual({ current_profile: 'q', profiles: { q: { base_url: 'https://q' } } });
  });

  it('keeps what it does not understand when it writes: a profile of another shape, other keys', async () => {
    const dir = join(tempDir(), 'leadctl');
    mkdirSync(dir);
    const odd = { base_url: 12, note: 'hand-edited' };
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({
        profiles: { x: { base_url: 'https://x' }, y: odd, constructor: odd },
        current_profile: 'x',
        telemetry: false,
      }),
    );
    const store = await openProfileStore(dir);
    expect(store.read().profiles).toEqual({ x: { base_url: 'https://x' } });
    store.saveProfile('z', { base_url: 'https://z' }, { makeCurrent: true });
    expect(store.removeProfile('x')).toBe(true);
    const file = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8'));
    expect(file).toEqual({
      profiles: { y: odd, constructor: odd, z: { base_url: 'https://z' } },
      current_profile: 'z',
      telemetry: false,
    });
    // Saved again under the same name, a profile of another shape gives way to the one saved.
    store.saveProfile('y', { base_url: 'https://y' });
    expect(store.profile('y')).toEqual({ base_url: 'https://y' });
  });

  it('names the file and what to do when it is not valid JSON', async () => {
    const dir = join(tempDir(), 'leadctl');
    mkdirSync(dir);
    writeFileSync(join(dir, 'config.json'), '{ not json');
    const store = await openProfileStore(dir);
    expect(() => store.read()).toThrow(UsageError);
    expect(() => store.read()).toThrow(/config\.json cannot be read/);
  });

  it('quotes nothing of a broken file, which holds client secrets', async () => {
    const dir = join(tempDir(), 'leadctl');
    mkdirSync(dir);
    const secret = 'Sx9-very-secret-client-value';
    // Cut short, and broken right after the secret: JSON.parse's own message would quote it.
    writeFileSync(join(dir, 'config.json'), `{"profiles":{"p":{"client_secret":"${secret}" x`);
    const store = await openProfileStore(dir);
    let caught: unknown;
    try {
      store.read();
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UsageError);
    const error = caught as UsageError;
    expect(error.message).toMatch(/config\.json cannot be read: it is not valid JSON/);
    expect(JSON.stringify({ m: error.message, h: error.hint, d: error.details })).not.toContain('very-secret');
    expect(error.cause).toBeUndefined();
  });

  it('keeps every change when several processes write at once', async () => {
    const dir = join(tempDir(), 'leadctl');
    // Separate processes need the built code (npm test builds first).
    const module = fileURLToPath(new URL('../../../dist/config/profiles.js', import.meta.url));
    const writers = 4;
    const perWriter = 15;
    const script = `
      const { openProfileStore } = await import(${JSON.stringify(module)});
      const store = await openProfileStore(${JSON.stringify(dir)});
      const w = process.argv[1];
      for (let i = 0; i < ${perWriter}; i++) {
        store.saveProfile('w' + w + '-' + i, { base_url: 'https://h/' + w, client_id: String(i) });
        store.saveToken('shared', { access_token: 'x', expires_at: 'e', obtained_at: 'o', client_id: 'c', base_url: 'b' });
      }
    `;
    const run = (w: number) =>
      new Promise<number | null>((resolve, reject) => {
        const child = spawn(process.execPath, ['--input-type=module', '-e', script, String(w)], {
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let err = '';
        child.stderr.on('data', (d) => (err += d));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(code) : reject(new Error(err))));
      });
    await Promise.all(Array.from({ length: writers }, (_, w) => run(w)));
    const data = JSON.parse(readFileSync(join(dir, 'config.json'), 'utf8')) as { profiles: Record<string, unknown> };
    expect(Object.keys(data.profiles)).toHaveLength(writers * perWriter);
    expect(mode(join(dir, 'config.json'))).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['config.json']);
  });
});
