import {
  lstatSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DeltaRecord, isCorruption, recordPath } from '../../../../src/jobs/delta/record.js';

/** A corrupt delta record never stops a push: it is set aside, and a fresh one takes its place. */

const work = mkdtempSync(join(tmpdir(), 'leadctl-delta-corrupt-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));
const target = { profile: 'nightly', baseUrl: 'http://127.0.0.1:1' };
let serial = 0;

function filled(customers: number) {
  const home = join(work, `home-${serial++}`);
  const state = join(home, 'state');
  const config = join(home, 'config');
  const record = DeltaRecord.open(state, config, target, true)!;
  const digests = Array.from({ length: customers }, (_, i) => ({
    id: record.digest('customer', String(i)),
    payload: record.digest('payload', String(i)),
  }));
  record.settle(digests, [], 1, 'run-1');
  record.close();
  return { state, config, path: recordPath(state, target), records: join(state, 'records') };
}

const corrupt = (path: string, from: (length: number) => number) => {
  const bytes = readFileSync(path);
  for (let i = from(bytes.length); i < bytes.length; i += 97) bytes[i] = 0xab;
  writeFileSync(path, bytes);
};

describe('a corrupt delta record', () => {
  it('found when opened ("file is not a database"): set aside as NAME.corrupt-<time>, a warning names both, a fresh empty record', () => {
    const home = filled(50);
    writeFileSync(home.path, 'this is not SQLite at all '.repeat(20));
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    try {
      expect(record.customerCount).toBe(0);
      const aside = readdirSync(home.records).filter((n) => n.includes('.corrupt-'));
      expect(aside).toHaveLength(1);
      expect(aside[0]).toMatch(/\.sqlite\.corrupt-\d{8}T\d{6}Z$/);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toContain(`the delta record ${home.path} is corrupt (file is not a database)`);
      expect(warnings[0]).toContain(`set aside as ${join(home.records, aside[0]!)}`);
      expect(readFileSync(join(home.records, aside[0]!), 'utf8')).toMatch(/^this is not SQLite/);
    } finally {
      record.close();
    }
  });

  it('found at a lookup in the middle of a run ("malformed"): replaced there, the lookup finds nothing (sent), later writes land in the fresh record', () => {
    const home = filled(20_000);
    corrupt(home.path, (length) => Math.floor(length / 2));
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    try {
      let found = 0;
      for (let i = 0; i < 20_000; i++) if (record.customer(record.digest('customer', String(i)))) found++;
      expect(found).toBeLessThan(20_000);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/is corrupt \(database disk image is malformed\); it was set aside as .*\.corrupt-/);
      const fresh = { id: record.digest('customer', 'new'), payload: record.digest('payload', 'new') };
      record.settle([fresh], [], 2, 'run-2');
      expect(record.customerCount).toBe(1);
      expect(record.customer(fresh.id)).toBeDefined();
    } finally {
      record.close();
    }
    expect(readdirSync(home.records).filter((n) => n.includes('.corrupt-'))).toHaveLength(1);
    const reopened = DeltaRecord.open(home.state, home.config, target, true)!;
    expect(reopened.customerCount).toBe(1);
    reopened.close();
  });

  it('a command that only reads the record warns and leaves the file where it is', () => {
    const home = filled(10);
    writeFileSync(home.path, 'garbage '.repeat(100));
    const warnings: string[] = [];
    expect(DeltaRecord.open(home.state, home.config, target, false, (line) => warnings.push(line))).toBeUndefined();
    expect(warnings[0]).toMatch(/is corrupt \(file is not a database\); it is not used/);
    expect(readdirSync(home.records).filter((n) => n.includes('.corrupt-'))).toEqual([]);
  });

  it('a link where the record should be is never opened through: set aside, the file it points to untouched', () => {
    const home = filled(10);
    const victim = join(home.records, '..', 'victim');
    writeFileSync(victim, 'precious\n');
    unlinkSync(home.path);
    symlinkSync(victim, home.path);
    const warnings: string[] = [];
    const record = DeltaRecord.open(home.state, home.config, target, true, (line) => warnings.push(line))!;
    record.close();
    expect(readFileSync(victim, 'utf8')).toBe('precious\n');
    expect(lstatSync(home.path).isFile()).toBe(true);
    const aside = readdirSync(home.records).filter((n) => n.includes('.corrupt-'));
    expect(aside).toHaveLength(1);
    expect(lstatSync(join(home.records, aside[0]!)).isSymbolicLink()).toBe(true);
    expect(warnings[0]).toContain(`the delta record ${home.path} is corrupt (`);
  });

  it('tells corruption from other SQLite errors', () => {
    expect(isCorruption(Object.assign(new Error('x'), { code: 'SQLITE_CORRUPT' }))).toBe(true);
    expect(isCorruption(Object.assign(new Error('x'), { code: 'SQLITE_NOTADB' }))).toBe(true);
    expect(isCorruption(Object.assign(new Error('x'), { code: 'SQLITE_FULL' }))).toBe(false);
    expect(isCorruption(new Error('x'))).toBe(false);
  });
});
