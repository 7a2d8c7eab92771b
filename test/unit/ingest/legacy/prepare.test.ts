import { describe, expect, it } from 'vitest';
import {
  centralTimeStamp,
  checkStampZone,
  prepareLegacyLead,
  resolveApiKey,
  shortenSourceUrl,
} from '../../../../src/ingest/legacy/prepare.js';

describe('centralTimeStamp', () => {
  it('uses the contract format at the fixed offset UTC-06:00, summer and winter alike', () => {
    expect(centralTimeStamp(new Date('2024-07-04T18:30:05Z'))).toBe('2024-07-04 12:30:05');
    expect(centralTimeStamp(new Date('2024-01-04T18:30:05Z'))).toBe('2024-01-04 12:30:05');
  });

  it('follows the Chicago wall clock (CDT in summer) when that zone is asked for', () => {
    expect(centralTimeStamp(new Date('2024-07-04T18:30:05Z'), 'America/Chicago')).toBe('2024-07-04 13:30:05');
    expect(centralTimeStamp(new Date('2024-01-04T18:30:05Z'), 'America/Chicago')).toBe('2024-01-04 12:30:05');
  });

  it('crosses midnight into the previous day', () => {
    expect(centralTimeStamp(new Date('2024-03-01T03:00:00Z'))).toBe('2024-02-29 21:00:00');
  });

  it('refuses an unknown zone', () => {
    expect(() => checkStampZone('Mars/Olympus')).toThrow(/unknown time zone "Mars\/Olympus"/);
    expect(checkStampZone('America/Chicago')).toBe('America/Chicago');
  });
});

describe('shortenSourceUrl', () => {
  const base = 'https://example.com/apply/step-1';
  it('keeps a URL of up to 255 characters as it is, query included', () => {
    const url = base + '?' + 'a'.repeat(255 - base.length - 1);
    expect(url).toHaveLength(255);
    expect(shortenSourceUrl(url)).toEqual({ url, changed: false });
  });

  it('drops the query (and fragment) of a longer URL', () => {
    const url = base + '?utm=' + 'x'.repeat(300) + '#top';
    expect(shortenSourceUrl(url)).toEqual({ url: base, changed: true });
  });

  it('leaves a long URL without a query alone (validation reports it)', () => {
    const url = 'https://example.com/' + 'p'.repeat(300);
    expect(shortenSourceUrl(url)).toEqual({ url, changed: false });
  });
});

describe('resolveApiKey', () => {
  it('prefers the flag, then LEADCTL_API_KEY, then the file', () => {
    expect(resolveApiKey('F', 'E', 'L')).toEqual({ key: 'F', source: 'flag' });
    expect(resolveApiKey(undefined, 'E', 'L')).toEqual({ key: 'E', source: 'environment' });
    expect(resolveApiKey(undefined, undefined, 'L')).toEqual({ key: 'L', source: 'file' });
    expect(resolveApiKey(undefined, '', 5)).toEqual({});
  });
});

describe('prepareLegacyLead', () => {
  const now = new Date('2024-07-04T18:30:05Z');

  it('fills a missing time_stamp only with --stamp, and never overwrites one', () => {
    expect(prepareLegacyLead({}, { stamp: false, now }).data.time_stamp).toBeUndefined();
    const stamped = prepareLegacyLead({}, { stamp: true, now });
    expect(stamped.data.time_stamp).toBe('2024-07-04 12:30:05');
    expect(stamped.notes.join()).toMatch(/time_stamp set to 2024-07-04 12:30:05/);
    expect(prepareLegacyLead({ time_stamp: '2020-01-01 00:00:00' }, { stamp: true, now }).data.time_stamp).toBe(
      '2020-01-01 00:00:00',
    );
  });

  it('shortens a long source_url with a note and does not mutate the input', () => {
    const raw = { source_url: 'https://a.example/x?' + 'q'.repeat(300) };
    const p = prepareLegacyLead(raw, { stamp: false, now });
    expect(p.data.source_url).toBe('https://a.example/x');
    expect(p.notes[0]).toMatch(/source_url was 320 characters .*query parameters dropped/);
    expect(raw.source_url).toHaveLength(320);
  });

  it('sets the api key and says when it replaced the one in the file', () => {
    const p = prepareLegacyLead({ api_key: 'from-file' }, { apiKeyFlag: 'from-flag', stamp: false, now });
    expect(p.data.api_key).toBe('from-flag');
    expect(p.apiKeySource).toBe('flag');
    expect(p.notes).toEqual([
      'api_key from the file replaced by the one from --api-key, --api-key-file or --api-key-stdin',
    ]);
    expect(prepareLegacyLead({ api_key: 'k' }, { stamp: false, now }).notes).toEqual([]);
  });
});
