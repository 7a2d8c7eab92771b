import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../../src/errors.js';
import { secretFromFile, secretFromStdin } from '../../../src/config/secret-input.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-secret-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function secretFile(name: string, content: string): string {
  writeFileSync(join(dir, name), content, { mode: 0o600 });
  return name;
}

async function refusal(run: () => Promise<unknown>): Promise<UsageError> {
  try {
    await run();
  } catch (err) {
    expect(err).toBeInstanceOf(UsageError);
    return err as UsageError;
  }
  throw new Error('expected a UsageError');
}

describe('secrets from a file or standard input', () => {
  it('takes the first non-blank line, trimmed', async () => {
    const warnings: string[] = [];
    expect(
      await secretFromFile({ cwd: dir }, secretFile('ok', '\n  s3cr3t  \nother\n'), 'client secret', (w) =>
        warnings.push(w),
      ),
    ).toBe('s3cr3t');
    expect(warnings).toEqual([]);
    expect(await secretFromStdin({ stdin: Readable.from([Buffer.from('key\n')]) }, '--api-key-stdin')).toBe('key');
  });

  it('refuses a file larger than 64 KiB before reading it (exit 2, naming the file)', async () => {
    const name = secretFile('export.csv', `${'x'.repeat(64 * 1024)}\n`);
    const err = await refusal(() => secretFromFile({ cwd: dir }, name, 'client secret', () => {}));
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe(
      `the client secret file ${join(dir, name)} is 65,537 bytes; a secret file holds at most 64 KiB`,
    );
    expect(err.message).not.toContain('xxxx');
  });

  it.runIf(process.platform !== 'win32')('refuses an endless file (a device) once past 64 KiB', async () => {
    const err = await refusal(() => secretFromFile({ cwd: dir }, '/dev/zero', 'api key', () => {}));
    expect(err.message).toBe('the api key file /dev/zero holds more than 64 KiB; a secret file holds at most 64 KiB');
  });

  it('a missing file named like a secret is not named back; a missing path is', async () => {
    const typed = await secretFromFile({ cwd: dir }, 'S3cr3t-CANARY-x9Qz+/=&Zq', 'client secret', () => {}).catch(
      (e: unknown) => e as UsageError,
    );
    expect(typed).toBeInstanceOf(UsageError);
    expect(String((typed as UsageError).message)).toBe(
      'the client secret file given does not exist (its name is not repeated here: it may be the client secret itself)',
    );
    // A base64 secret has slashes too: named back only when its folder exists.
    const slashed = await secretFromFile({ cwd: dir }, 'Zm9vYmFy/c2VjcmV0a2V5MTIz', 'client secret', () => {}).catch(
      (e: unknown) => e as UsageError,
    );
    expect((slashed as UsageError).message).not.toContain('Zm9v');
    const path = await secretFromFile({ cwd: dir }, 'client.txt', 'client secret', () => {}).catch(
      (e: unknown) => e as UsageError,
    );
    expect((path as UsageError).message).toBe(`cannot read the client secret file ${join(dir, 'client.txt')}: ENOENT`);
  });

  it('refuses more than 64 KiB on standard input', async () => {
    const stdin = Readable.from([Buffer.alloc(40 * 1024, 0x61), Buffer.alloc(40 * 1024, 0x61)]);
    const err = await refusal(() => secretFromStdin({ stdin }, '--client-secret-stdin'));
    expect(err.message).toBe('--client-secret-stdin: standard input holds more than 64 KiB; a secret is at most that');
  });
});
