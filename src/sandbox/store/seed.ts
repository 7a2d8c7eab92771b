import { randomUUID } from 'node:crypto';
import { isoSeconds } from '../clock.js';
import { randomAlphanumeric, randomHex } from '../random.js';
import type { Db } from './database.js';

/** The one account every sandbox serves (the documented example's Account ID). */
export const ACCOUNT_ID = 10000;

export const SEED_MANAGEMENT_SYSTEMS = [
  { id: 1, name: 'Sandbox LMS' },
  { id: 2, name: 'Ledger Loan Manager' },
  { id: 3, name: 'In-House Servicing' },
] as const;

export const SEED_CAMPAIGNS = [
  { id: 1, name: 'Sandbox Direct', campaign_code: 'SBX-DIRECT', price: 25, price_reject: false },
  { id: 2, name: 'Sandbox Price Reject', campaign_code: 'SBX-PRICE-REJECT', price: 40, price_reject: true },
] as const;

export interface Campaign {
  id: number;
  name: string;
  api_key: string;
  campaign_code: string;
  price: number;
  price_reject: boolean;
}

export interface SeededAccount {
  clientId: string;
  clientSecret: string;
  campaigns: Campaign[];
  /** HS256 key the access tokens are signed with. */
  signingKey: Uint8Array;
}

/**
 * Seeds the account on first start and returns it. On later starts the stored account is
 * kept; a client id or secret given explicitly replaces the stored one (a new secret cuts
 * off tokens issued before, as rotation does).
 */
export function seedAccount(db: Db, now: Date, overrides: { clientId?: string; clientSecret?: string }): SeededAccount {
  const run = db.transaction(() => {
    const created = isoSeconds(now);
    if (!db.prepare('SELECT 1 FROM accounts WHERE id = ?').get(ACCOUNT_ID)) {
      db.prepare('INSERT INTO accounts (id, name) VALUES (?, ?)').run(ACCOUNT_ID, 'Sandbox Lender');
      db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)').run('signing_key', randomHex(32));
      db.prepare(
        'INSERT INTO oauth_clients (client_id, account_id, client_secret, created_at) VALUES (?, ?, ?, ?)',
      ).run(overrides.clientId ?? randomUUID(), ACCOUNT_ID, overrides.clientSecret ?? randomAlphanumeric(40), created);
      const insertCampaign = db.prepare(
        'INSERT INTO campaigns (id, account_id, name, api_key, campaign_code, price, price_reject) VALUES (?, ?, ?, ?, ?, ?, ?)',
      );
      for (const c of SEED_CAMPAIGNS)
        insertCampaign.run(
          c.id,
          ACCOUNT_ID,
          c.name,
          randomAlphanumeric(40),
          c.campaign_code,
          c.price,
          c.price_reject ? 1 : 0,
        );
      const insertSystem = db.prepare('INSERT INTO management_systems (id, account_id, name) VALUES (?, ?, ?)');
      for (const s of SEED_MANAGEMENT_SYSTEMS) insertSystem.run(s.id, ACCOUNT_ID, s.name);
    }
    const client = db
      .prepare('SELECT client_id, client_secret FROM oauth_clients WHERE account_id = ? ORDER BY created_at LIMIT 1')
      .get(ACCOUNT_ID) as {
      client_id: string;
      client_secret: string;
    };
    if (overrides.clientId !== undefined && overrides.clientId !== client.client_id) {
      db.prepare('UPDATE oauth_clients SET client_id = ?, secret_version = secret_version + 1 WHERE client_id = ?').run(
        overrides.clientId,
        client.client_id,
      );
      client.client_id = overrides.clientId;
    }
    if (overrides.clientSecret !== undefined && overrides.clientSecret !== client.client_secret) {
      db.prepare(
        'UPDATE oauth_clients SET client_secret = ?, secret_version = secret_version + 1 WHERE client_id = ?',
      ).run(overrides.clientSecret, client.client_id);
      client.client_secret = overrides.clientSecret;
    }
    const key = (db.prepare("SELECT value FROM meta WHERE key = 'signing_key'").get() as { value: string }).value;
    const campaigns = (
      db
        .prepare(
          'SELECT id, name, api_key, campaign_code, price, price_reject FROM campaigns WHERE account_id = ? ORDER BY id',
        )
        .all(ACCOUNT_ID) as any[]
    ).map((c): Campaign => ({ ...c, price_reject: c.price_reject === 1 }));
    return {
      clientId: client.client_id,
      clientSecret: client.client_secret,
      campaigns,
      signingKey: Buffer.from(key, 'hex'),
    };
  });
  return run();
}
