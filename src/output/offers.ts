import { DateTime } from 'luxon';
import type { Column } from './render.js';

export interface Offer {
  id: number;
  price: number;
  expires_in: number;
}

/**
 * One price-reject offer as a person reads it: its expiry as an instant (the table shows it in the
 * local zone, or UTC with --utc, and says which in the heading) and as time left from now.
 */
export interface OfferRow {
  id: number;
  price: string;
  expires_at: string;
  expires: string;
}

/** The same offer for scripts: the service's fields plus an absolute UTC expiry. */
export interface OfferRecord extends Offer {
  expires_at: string;
}

export const OFFER_COLUMNS: (Column<OfferRow> & { key: keyof OfferRow })[] = [
  { key: 'id', header: 'offer id' },
  { key: 'price', header: 'price' },
  { key: 'expires_at', header: 'expires at', time: true },
  { key: 'expires', header: 'expires' },
];

export function formatPrice(price: number): string {
  return price.toFixed(2);
}

/** `in 45s`, `in 14m`, `in 2h 05m`, `in 4d 0h`; counts down (floors) so it never promises too much time. */
export function formatExpiresIn(seconds: number): string {
  const s = Math.floor(seconds);
  if (s <= 0) return 'expired';
  if (s < 60) return `in ${s}s`;
  if (s < 3600) return `in ${Math.floor(s / 60)}m`;
  if (s < 86400) return `in ${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  return `in ${Math.floor(s / 86400)}d ${Math.floor((s % 86400) / 3600)}h`;
}

/**
 * `receivedAt` is when the response arrived: expires_in counts from then. The expiry is a UTC
 * instant, which the table shows in the zone of every other time (the output's: TZ, or --utc).
 */
export function offerRows(offers: readonly Offer[], receivedAt: Date, now: Date = receivedAt): OfferRow[] {
  // Whole seconds: the few milliseconds between answer and display must not turn 15m into 14m.
  const elapsed = Math.round((now.getTime() - receivedAt.getTime()) / 1000);
  return offers.map((o) => ({
    id: o.id,
    price: formatPrice(o.price),
    expires_at: expiresAt(receivedAt, o.expires_in),
    expires: formatExpiresIn(o.expires_in - elapsed),
  }));
}

function expiresAt(receivedAt: Date, seconds: number): string {
  return DateTime.fromJSDate(receivedAt)
    .toUTC()
    .plus({ seconds })
    .startOf('second')
    .toFormat("yyyy-MM-dd'T'HH:mm:ss'Z'");
}

export function offerRecords(offers: readonly Offer[], receivedAt: Date): OfferRecord[] {
  return offers.map((o) => ({ ...o, expires_at: expiresAt(receivedAt, o.expires_in) }));
}
