import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';
import { startSandboxInProcess } from '../helpers/sandbox.js';

const fixture = (...p: string[]) => fileURLToPath(new URL(`../../fixtures/${p.join('/')}`, import.meta.url));
let sandbox: Awaited<ReturnType<typeof startSandboxInProcess>>;
let dir: string;
let directKey: string;

beforeAll(async () => {
  sandbox = await startSandboxInProcess();
  dir = mkdtempSync(join(tmpdir(), 'leadctl-cmd-scriptable-'));
  directKey = sandbox.campaigns.find((c) => !c.price_reject)!.api_key;
});
afterAll(async () => {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
});

function io(options: { stdin?: string; env?: Record<string, string>; tty?: boolean } = {}) {
  return memoryIO({
    stdin: options.stdin,
    cwd: dir,
    tty: options.tty,
    env: {
      LEADCTL_BASE_URL: sandbox.baseUrl,
      LEADCTL_CLIENT_ID: sandbox.clientId,
      LEADCTL_CLIENT_SECRET: sandbox.clientSecret,
      LEADCTL_CONFIG_DIR: join(dir, 'config'),
      LEADCTL_STATE_DIR: join(dir, 'state'),
      ...options.env,
    },
  });
}

async function run(argv: string[], options: Parameters<typeof io>[0] = {}) {
  const r = io(options);
  const code = await main(argv, r);
  return { code, stdout: r.stdoutText(), stderr: r.stderrText() };
}

/** Every string value "true" or "false" anywhere in a JSON document. */
function stringBooleans(value: unknown, path = '$'): string[] {
  if (value === 'true' || value === 'false') return [path];
  if (Array.isArray(value)) return value.flatMap((v, i) => stringBooleans(v, `${path}[${i}]`));
  if (value && typeof value === 'object')
    return Object.entries(value).flatMap(([k, v]) => stringBooleans(v, `${path}.${k}`));
  return [];
}

describe('JSON shapes do not depend on how many things were asked for', () => {
  it('legacy post: an array for a file of one lead, as for NDJSON of several', async () => {
    const one = await run(['legacy', 'post', fixture('legacy', 'accepted.json'), '--stamp', '-o', 'json'], {
      env: { LEADCTL_API_KEY: directKey },
    });
    expect(one.code).toBe(0);
    const oneDoc = JSON.parse(one.stdout);
    expect(Array.isArray(oneDoc)).toBe(true);
    expect(oneDoc).toHaveLength(1);
    expect(oneDoc[0]).toMatchObject({ lead: 1, outcome: 'accepted', status: 'OK' });

    const many = await run(['legacy', 'post', fixture('legacy', 'batch.ndjson'), '-o', 'json'], {
      env: { LEADCTL_API_KEY: directKey },
    });
    const manyDoc = JSON.parse(many.stdout);
    expect(manyDoc).toHaveLength(2);
    expect(Object.keys(manyDoc[0]).sort()).toEqual(Object.keys(oneDoc[0]).sort());
  });

  it('leads get: an array of leads for one id as for two', async () => {
    const ids = JSON.parse((await run(['leads', 'ids', '--date', 'today', '-o', 'json'])).stdout) as number[];
    expect(ids.length).toBeGreaterThanOrEqual(2);
    const one = await run(['leads', 'get', String(ids[0]), '--columns', 'email,is_accepted', '-o', 'json']);
    const two = await run([
      'leads',
      'get',
      String(ids[0]),
      String(ids[1]),
      '--columns',
      'email,is_accepted',
      '-o',
      'json',
    ]);
    expect(one.code).toBe(0);
    const oneDoc = JSON.parse(one.stdout);
    const twoDoc = JSON.parse(two.stdout);
    expect(Array.isArray(oneDoc)).toBe(true);
    expect(oneDoc).toEqual([twoDoc[0]]);
    expect(twoDoc).toHaveLength(2);
    // Real booleans, not the words
    expect(typeof oneDoc[0].is_accepted).toBe('boolean');
    // implied JSON (stdout piped) is the same document
    const piped = await run(['leads', 'get', String(ids[0]), '--columns', 'email,is_accepted']);
    expect(JSON.parse(piped.stdout)).toEqual(oneDoc);
  });
});

describe('real booleans and numbers in every JSON document', () => {
  it('lists, summaries, auth status, dry runs, leads: no "true"/"false" strings', async () => {
    writeFileSync(join(dir, 'zips.csv'), 'zip\n10001\n10002\n');
    const docs: Array<[string, unknown]> = [];
    for (const argv of [
      ['lists', 'create', 'zips.csv', '--name', 'Zips', '--type', 'zip'],
      ['lists', 'create', 'zips.csv', '--name', 'Zips2', '--type', 'zip', '--validate-only'],
      ['lists', 'ls'],
      ['lists', 'get', '1'],
      ['auth', 'status'],
      ['systems', 'ls'],
      ['dry-run', '--ssn', '345-67-8901'],
      ['leads', 'get', '1', '2'],
    ]) {
      const r = await run([...argv, '-o', 'json']);
      docs.push([argv.join(' '), JSON.parse(r.stdout)]);
    }
    for (const [name, doc] of docs) expect(stringBooleans(doc), name).toEqual([]);
    const created = docs[1]![1] as { validate_only: unknown };
    expect(created.validate_only).toBe(true);
    const listed = docs[2]![1] as Array<{ archived: unknown }>;
    expect(listed[0]!.archived).toBe(false);
  });

  it('NDJSON and CSV of lists: a boolean and the word true/false', async () => {
    const nd = await run(['lists', 'ls', '-o', 'ndjson']);
    expect(JSON.parse(nd.stdout.split('\n')[0]!).archived).toBe(false);
    const csv = await run(['lists', 'ls', '-o', 'csv']);
    expect(csv.stdout.split('\n')[1]).toMatch(/,false,/);
  });
});

describe('tables for people', () => {
  it('lists ls: fits 80 columns, times local with the offset of TZ, or UTC with --utc', async () => {
    writeFileSync(join(dir, 'zips2.csv'), 'zip\n10001\n');
    await run([
      'lists',
      'create',
      'zips2.csv',
      '--name',
      'A list name long enough to need wrapping in an eighty column table, as real ones are',
      '--type',
      'zip',
    ]);
    const local = await run(['-o', 'table', 'lists', 'ls'], { env: { TZ: 'America/Chicago' } });
    expect(Math.max(...local.stdout.split('\n').map((l) => [...l].length))).toBeLessThanOrEqual(80);
    expect(local.stdout).toMatch(/ -0[56]:00 /);
    const utc = await run(['-o', 'table', '--utc', 'lists', 'ls'], { env: { TZ: 'America/Chicago' } });
    expect(utc.stdout).toMatch(/ UTC /);
    expect(utc.stdout).not.toMatch(/ -0[56]:00 /);
    const json = await run(['-o', 'json', '--utc', 'lists', 'ls']);
    expect(JSON.parse(json.stdout)[0].created_at).toMatch(/Z$/);
  });
});
