import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFixture, requestsTo, sandboxDay, startEnv, variantLead, type Env } from './service-env.js';
import { errorLines } from '../helpers/binary.js';
import { sleep, spawnBinary } from './push-helpers.js';

const LEADS = 230;

describe('leads dictionary | ids | get | export (built binary against the sandbox)', () => {
  let env: Env;
  let day: string;
  let allIds: number[];
  let acceptedId: number;
  /** Email of each posted lead by its id (posts run concurrently, so ids do not follow the index). */
  const emailById = new Map<number, string>();

  beforeAll(async () => {
    env = await startEnv();
    const accepted = await env.postRaw({ ...readFixture('legacy', 'accepted.json'), api_key: env.directKey });
    expect(accepted.result).toBe('A');
    acceptedId = accepted.lead_id;
    for (let start = 0; start < LEADS; start += 25) {
      const leads = Array.from({ length: Math.min(25, LEADS - start) }, (_, i) =>
        variantLead(start + i, env.directKey),
      );
      const answers = await Promise.all(leads.map((lead) => env.postRaw(lead)));
      answers.forEach((answer, i) => {
        expect(answer.status).toBe('OK');
        emailById.set(answer.lead_id, leads[i]!.email as string);
      });
    }
    day = await sandboxDay(env.sandbox);
  });

  afterAll(async () => {
    await env?.stop();
  });

  it('dictionary --search finds attributes by any field, and is cached for the next run', async () => {
    const r = await env.run(['leads', 'dictionary', '--search', 'phone', '-o', 'json']);
    expect(r.code).toBe(0);
    const found = JSON.parse(r.stdout) as { id: string; column: string; name: string }[];
    expect(found.map((e) => e.column)).toEqual(expect.arrayContaining(['home_phone', 'cell_phone', 'work_phone']));
    expect(found.every((e) => JSON.stringify(e).toLowerCase().includes('phone'))).toBe(true);

    const before = await requestsTo(env.sandbox, 'dictionary');
    const table = await env.run(['leads', 'dictionary', '--category', 'Bank', '-o', 'table']);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/│ id\s+│ category\s+│ subcategory\s+│ name\s+│ column\s+│ type\s+│/);
    expect(table.stdout).toContain('bank_routing_number');
    expect(table.stdout).not.toContain('home_phone');
    expect(await requestsTo(env.sandbox, 'dictionary')).toBe(before);

    const refreshed = await env.run(['leads', 'dictionary', '--refresh', '--search', 'lead id', '-o', 'csv']);
    expect(refreshed.stdout.split('\n')[1]).toBe('m1,Lead,Internal Lead Data,Lead ID,lead_id,Number');
    expect(await requestsTo(env.sandbox, 'dictionary')).toBe(before + 1);
  });

  it('ids --all follows the cursor across many pages and streams every id once', async () => {
    const before = await requestsTo(env.sandbox, 'lead-ids');
    const r = await env.run(['leads', 'ids', '--date', day, '--per-page', '20', '--all', '-o', 'json']);
    expect(r.code).toBe(0);
    allIds = JSON.parse(r.stdout) as number[];
    expect(allIds).toHaveLength(LEADS + 1);
    expect(new Set(allIds).size).toBe(LEADS + 1);
    expect([...allIds].sort((a, b) => a - b)).toEqual(allIds);
    expect(await requestsTo(env.sandbox, 'lead-ids')).toBe(before + Math.ceil((LEADS + 1) / 20));
    expect(r.stderr).not.toContain('next_cursor');
  });

  it('ids --limit stops early, prints the next cursor, and --cursor continues exactly there', async () => {
    const first = await env.run(['leads', 'ids', '--date', day, '--per-page', '25', '--limit', '60', '-o', 'ndjson']);
    expect(first.code).toBe(0);
    const firstIds = first.stdout
      .trim()
      .split('\n')
      .map((l) => (JSON.parse(l) as { lead_id: number }).lead_id);
    expect(firstIds).toEqual(allIds.slice(0, 60));
    const cursor = /next_cursor: (\S+)/.exec(first.stderr)?.[1];
    expect(cursor).toBeTruthy();
    expect(first.stderr).toContain(
      `Continue with: leadctl leads ids --date ${day} --per-page 25 --limit 60 --cursor ${cursor}`,
    );

    const rest = await env.run([
      'leads',
      'ids',
      '--date',
      day,
      '--per-page',
      '100',
      '--all',
      '--cursor',
      cursor!,
      '-o',
      'csv',
    ]);
    expect(rest.code).toBe(0);
    const lines = rest.stdout.trim().split('\n');
    expect(lines[0]).toBe('lead_id');
    expect([...firstIds, ...lines.slice(1).map(Number)]).toEqual(allIds);
  });

  it('ids refuses a date that does not exist before asking the service', async () => {
    const before = await requestsTo(env.sandbox, 'lead-ids');
    const r = await env.run(['leads', 'ids', '--date', '2024-02-30']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toContain('--date "2024-02-30" is not a real calendar date');
    const both = await env.run(['leads', 'ids', '--all', '--limit', '5']);
    expect(both.code).toBe(2);
    expect(await requestsTo(env.sandbox, 'lead-ids')).toBe(before);
  });

  it('get shows the columns asked for by name, masking SSNs and account numbers in tables only', async () => {
    const json = await env.run([
      'leads',
      'get',
      String(acceptedId),
      '--columns',
      'email,Social Security Number,bank_account_number',
      '-o',
      'json',
    ]);
    expect(json.code).toBe(0);
    // One id or many: an array of leads.
    expect(JSON.parse(json.stdout)).toEqual([
      {
        lead_id: acceptedId,
        email: 'maria.gonzalez@example.com',
        social_security_number: '212456789',
        bank_account_number: '004417712345',
      },
    ]);

    const table = await env.run([
      'leads',
      'get',
      String(acceptedId),
      '--columns',
      'email,social_security_number,bank_account_number',
      '-o',
      'table',
    ]);
    expect(table.stdout).toMatch(/social_security_number:\s+\*{5}6789/);
    expect(table.stdout).toMatch(/bank_account_number:\s+\*{8}2345/);
    expect(table.stdout).not.toContain('212456789');

    const unmasked = await env.run([
      'leads',
      'get',
      String(acceptedId),
      '--columns',
      'social_security_number',
      '--no-mask',
      '-o',
      'table',
    ]);
    expect(unmasked.stdout).toContain('212456789');

    const raw = await env.run(['leads', 'get', String(acceptedId), '--map-ids', 'm1,m2', '--raw', '-o', 'json']);
    expect(JSON.parse(raw.stdout)).toEqual([{ m1: acceptedId, m2: 10000 }]);
  });

  it('get of several leads lists them in order, and exits 4 naming a lead that does not exist', async () => {
    const ok = await env.run(['leads', 'get', String(allIds[1]), String(allIds[2]), '--columns', 'email', '-o', 'csv']);
    expect(ok.code).toBe(0);
    expect(ok.stdout.trim().split('\n')).toEqual([
      'lead_id,email',
      `${allIds[1]},${emailById.get(allIds[1]!)}`,
      `${allIds[2]},${emailById.get(allIds[2]!)}`,
    ]);

    const some = await env.run(['leads', 'get', String(allIds[1]), '999999', '--columns', 'email', '-o', 'ndjson']);
    expect(some.code).toBe(4);
    expect(some.stdout.trim().split('\n')).toHaveLength(1);
    expect(some.stderr).toContain('lead 999999: not found');

    // JSON stays one document: the leads found, with the missing one named on stderr only.
    const someJson = await env.run(['leads', 'get', String(allIds[1]), '999999', '--columns', 'email', '-o', 'json']);
    expect(someJson.code).toBe(4);
    expect(JSON.parse(someJson.stdout)).toEqual([{ lead_id: allIds[1], email: emailById.get(allIds[1]!) }]);
    expect(someJson.stderr).toContain('1 of 2 leads could not be read');

    const none = await env.run(['leads', 'get', '999999']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('lead 999999 was not found');
  });

  it('get refuses an unknown column with suggestions before fetching any lead', async () => {
    const before = await requestsTo(env.sandbox, 'lead-data/leads');
    const r = await env.run(['leads', 'get', String(acceptedId), '--columns', 'emial,phone_home']);
    expect(r.code).toBe(2);
    expect(errorLines(r.stderr)).toContain('unknown column "emial"');
    expect(errorLines(r.stderr)).toMatch(/unknown column "phone_home" \(did you mean [^)]*home_phone/);
    expect(await requestsTo(env.sandbox, 'lead-data/leads')).toBe(before);
  });

  it("export writes the day's leads to CSV in id order, headed by column names", async () => {
    const r = await env.run([
      'leads',
      'export',
      '--date',
      day,
      '--columns',
      'lead_id,email,social_security_number,Lead Status',
      '--concurrency',
      '6',
      '--out',
      'day.csv',
      '-o',
      'json',
    ]);
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ ids: LEADS + 1, exported: LEADS + 1, missing: [], columns: 4 });
    const rows = parse(readFileSync(join(env.dir, 'day.csv'), 'utf8'), { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual(['lead_id', 'email', 'social_security_number', 'lead_status']);
    expect(rows.map((row) => Number(row.lead_id))).toEqual(allIds);
    expect(rows[0]).toEqual({
      lead_id: String(acceptedId),
      email: 'maria.gonzalez@example.com',
      social_security_number: '212456789',
      lead_status: 'Accepted',
    });
    for (const row of rows.slice(1)) expect(row.email).toBe(emailById.get(Number(row.lead_id)));
    expect(new Set(rows.map((row) => row.email)).size).toBe(LEADS + 1);
  });

  it('export without --columns has one column per dictionary attribute', async () => {
    const dictionary = JSON.parse((await env.run(['leads', 'dictionary', '-o', 'json'])).stdout) as {
      column: string;
    }[];
    const r = await env.run(['leads', 'export', '--datetime', `${day}T00:00:00Z`, '--out', '-', '-o', 'csv']);
    expect(r.code).toBe(0);
    const rows = parse(r.stdout, { columns: true }) as Record<string, string>[];
    expect(Object.keys(rows[0]!)).toEqual(dictionary.map((d) => d.column));
    expect(rows).toHaveLength(LEADS + 1);
    expect(rows[0]!.first_name).toBe('Maria');
    expect(rows[0]!.is_accepted).toBe('true');
  });

  it('export needs a day or a time', async () => {
    const r = await env.run(['leads', 'export', '--out', 'x.csv']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('leads export needs --date YYYY-MM-DD or --datetime ISO');
  });
});

describe('leads export stopped by a signal (built binary against a slow sandbox)', () => {
  it('Ctrl-C mid-export writes no file and leaves no partial copy of the leads, exit 130', async () => {
    const env = await startEnv(['--latency', '150']);
    try {
      for (let n = 0; n < 20; n++) expect((await env.postRaw(variantLead(n, env.directKey))).status).toBe('OK');
      const day = await sandboxDay(env.sandbox);
      const run = spawnBinary(
        [
          'leads',
          'export',
          '--date',
          day,
          '--columns',
          'lead_id,email',
          '--concurrency',
          '1',
          '--out',
          'day.csv',
          '-o',
          'json',
        ],
        {
          LEADCTL_BASE_URL: env.sandbox.baseUrl,
          LEADCTL_CLIENT_ID: env.sandbox.clientId,
          LEADCTL_CLIENT_SECRET: env.sandbox.clientSecret,
          LEADCTL_CONFIG_DIR: join(env.dir, 'config'),
          LEADCTL_STATE_DIR: join(env.dir, 'state'),
        },
        env.dir,
      );
      // Once the partial file holds leads: it is being written (20 leads at 150 ms: a window of ~3 s).
      let ended = false;
      void run.exited.then(() => (ended = true));
      const writing = () => {
        const partial = readdirSync(env.dir).find((n) => n.startsWith('day.csv') && n.endsWith('.partial'));
        try {
          return partial !== undefined && statSync(join(env.dir, partial)).size > 40;
        } catch {
          return false; // renamed between the two looks
        }
      };
      for (const deadline = Date.now() + 30_000; !writing(); await sleep(20)) {
        if (ended || Date.now() > deadline)
          throw new Error(
            `the export ${ended ? 'ended' : 'went on'} before its file was seen being written:\n${run.output().stderr}`,
          );
      }
      run.kill('SIGINT');
      const end = await run.exited;
      expect(end.code, run.output().stderr).toBe(130);
      expect(readdirSync(env.dir).filter((n) => n.startsWith('day.csv'))).toEqual([]);
      expect(run.output().stderr).toContain('interrupted by SIGINT');
    } finally {
      await env.stop();
    }
  });
});
