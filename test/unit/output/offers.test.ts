import { describe, expect, it } from 'vitest';
import { formatExpiresIn, formatPrice, OFFER_COLUMNS, offerRecords, offerRows } from '../../../src/output/offers.js';
import { Output } from '../../../src/output/render.js';

describe('formatExpiresIn', () => {
  it('counts down in the largest sensible units', () => {
    expect(formatExpiresIn(45)).toBe('in 45s');
    expect(formatExpiresIn(900)).toBe('in 15m');
    expect(formatExpiresIn(899)).toBe('in 14m');
    expect(formatExpiresIn(7500)).toBe('in 2h 05m');
    expect(formatExpiresIn(345600)).toBe('in 4d 0h');
    expect(formatExpiresIn(0)).toBe('expired');
  });
});

describe('offer rows', () => {
  const received = new Date('2024-07-04T18:30:00Z');
  const offers = [
    { id: 7, price: 15, expires_in: 900 },
    { id: 8, price: 12.5, expires_in: 300 },
  ];

  it('shows price with cents, expiry as an instant (the table shows its zone) and time left', () => {
    expect(offerRows(offers, received, received)).toEqual([
      { id: 7, price: '15.00', expires_at: '2024-07-04T18:45:00Z', expires: 'in 15m' },
      { id: 8, price: '12.50', expires_at: '2024-07-04T18:35:00Z', expires: 'in 5m' },
    ]);
  });

  it('is shown in local time under "(local time)", and in UTC under "(UTC)" with --utc', async () => {
    const table = async (utc: boolean) => {
      let text = '';
      const stream = { write: (s: string) => ((text += s), true), once: () => undefined } as never;
      const out = new Output(stream, { format: 'table', color: false, time: { utc, zone: 'America/Chicago' } });
      await out.list(offerRows(offers, received), OFFER_COLUMNS);
      return text;
    };
    const local = await table(false);
    expect(local).toContain('expires at (local time)');
    expect(local).toContain('2024-07-04 13:45:00 -05:00');
    expect(local).not.toContain('UTC');
    const utc = await table(true);
    expect(utc).toContain('expires at (UTC)');
    expect(utc).toContain('2024-07-04 18:45:00 UTC');
    expect(utc).not.toContain('local time');
  });

  it('counts time left from now, not from when the answer came', () => {
    const later = new Date(received.getTime() + 60_000);
    expect(offerRows(offers, received, later).map((r) => r.expires)).toEqual(['in 14m', 'in 4m']);
  });

  it('does not lose a minute to the milliseconds between the answer and its display', () => {
    const soon = new Date(received.getTime() + 40);
    expect(offerRows(offers, received, soon)[0]!.expires).toBe('in 15m');
  });

  it('gives scripts an absolute UTC expiry next to the service fields', () => {
    expect(offerRecords(offers, received)[0]).toEqual({
      id: 7,
      price: 15,
      expires_in: 900,
      expires_at: '2024-07-04T18:45:00Z',
    });
    expect(formatPrice(9.999)).toBe('10.00');
  });
});
