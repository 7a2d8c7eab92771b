import type { Db } from './database.js';

const TABLES = {
  customers: 'customers',
  loans: 'loans',
  payments: 'payments',
  lists: 'lists',
  list_items: 'list_items',
  leads: 'leads',
  offers: 'price_reject_offers',
  tokens: 'tokens',
} as const;

export type StoreCounts = Record<keyof typeof TABLES, number>;

/** Row counts of the store, for GET /_sandbox/stats. */
export function storeCounts(db: Db): StoreCounts {
  const out = {} as StoreCounts;
  for (const [name, table] of Object.entries(TABLES)) {
    out[name as keyof StoreCounts] = (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n;
  }
  return out;
}
