import type { Statement } from 'better-sqlite3';
import type { LegacyLead } from '../../schema/index.js';
import type { LeadFacts } from '../domain/dictionary.js';
import type { Db } from './database.js';
import type { Campaign } from './seed.js';

export type LeadResult = 'A' | 'R' | 'P';
export type OfferStatus = 'pending' | 'accepted' | 'revoked';

export interface NewLead {
  campaign: Campaign;
  result: LeadResult;
  price: number | null;
  redirectToken: string | null;
  request: LegacyLead;
  now: string;
}

export interface OfferRecord {
  id: number;
  lead_id: number;
  campaign_id: number;
  price: number;
  status: OfferStatus;
  expires_at: string;
}

export interface LeadRow {
  id: number;
  account_id: number;
  campaign_id: number;
  campaign_name: string;
  result: LeadResult;
  price: number | null;
  redirect_token: string | null;
  created_at: string;
  accepted_at: string | null;
  request_json: string;
}

export interface LeadIdsFilter {
  /** Inclusive lower bound of created_at. */
  from?: string;
  /** Exclusive upper bound of created_at. */
  before?: string;
}

/** Leads, their price reject offers, and the look-ups of lead data and the dry run. */
export class LeadStore {
  private readonly insertLead: Statement;
  private readonly insertOffer: Statement;
  private readonly offerById: Statement;
  private readonly leadById: Statement;
  private readonly leadByToken: Statement;
  private readonly setOfferStatus: Statement;
  private readonly revokeOthers: Statement;
  private readonly decideLead: Statement;
  private readonly purchased: Statement;
  private readonly decisioned: Statement;

  constructor(
    private readonly db: Db,
    private readonly accountId: number,
  ) {
    this.insertLead = db
      .prepare(
        `INSERT INTO leads (account_id, campaign_id, result, price, ssn, email, redirect_token, created_at, decisioned_at, accepted_at, request_json)
         VALUES (@account_id, @campaign_id, @result, @price, @ssn, @email, @redirect_token, @now, @now, @accepted_at, @request_json) RETURNING id`,
      )
      .pluck();
    this.insertOffer = db
      .prepare(
        `INSERT INTO price_reject_offers (lead_id, price, status, expires_at, created_at) VALUES (?, ?, 'pending', ?, ?) RETURNING id`,
      )
      .pluck();
    this.offerById = db.prepare(
      `SELECT o.id, o.lead_id, l.campaign_id, o.price, o.status, o.expires_at
       FROM price_reject_offers o JOIN leads l ON l.id = o.lead_id WHERE o.id = ? AND l.account_id = ?`,
    );
    const leadColumns = `l.id, l.account_id, l.campaign_id, c.name AS campaign_name, l.result, l.price, l.redirect_token, l.created_at, l.accepted_at, l.request_json`;
    this.leadById = db.prepare(
      `SELECT ${leadColumns} FROM leads l JOIN campaigns c ON c.id = l.campaign_id WHERE l.id = ? AND l.account_id = ?`,
    );
    this.leadByToken = db.prepare(
      `SELECT ${leadColumns} FROM leads l JOIN campaigns c ON c.id = l.campaign_id WHERE l.redirect_token = ?`,
    );
    this.setOfferStatus = db.prepare('UPDATE price_reject_offers SET status = ? WHERE id = ?');
    this.revokeOthers = db.prepare(
      `UPDATE price_reject_offers SET status = 'revoked' WHERE lead_id = ? AND id <> ? AND status = 'pending'`,
    );
    this.decideLead = db.prepare(
      'UPDATE leads SET result = ?, price = ?, redirect_token = ?, accepted_at = ? WHERE id = ?',
    );
    this.purchased = db
      .prepare(
        `SELECT 1 FROM leads WHERE account_id = @account_id AND result = 'A' AND (ssn = @ssn OR email = @email)
         AND (@since IS NULL OR accepted_at >= @since) LIMIT 1`,
      )
      .pluck();
    this.decisioned = db
      .prepare(
        `SELECT 1 FROM leads WHERE account_id = @account_id AND (ssn = @ssn OR email = @email)
         AND (@since IS NULL OR decisioned_at >= @since) LIMIT 1`,
      )
      .pluck();
  }

  /** Stores a lead, and its offers when it is pending (result P). Returns the lead id and offer ids. */
  create(lead: NewLead, offers: { price: number; expiresAt: string }[] = []): { id: number; offerIds: number[] } {
    return this.db.transaction(() => {
      const id = this.insertLead.get({
        account_id: this.accountId,
        campaign_id: lead.campaign.id,
        result: lead.result,
        price: lead.price,
        ssn: lead.request.social_security_number,
        email: lead.request.email.toLowerCase(),
        redirect_token: lead.redirectToken,
        now: lead.now,
        accepted_at: lead.result === 'A' ? lead.now : null,
        request_json: JSON.stringify(lead.request),
      }) as number;
      const offerIds = offers.map((o) => this.insertOffer.get(id, o.price, o.expiresAt, lead.now) as number);
      return { id, offerIds };
    })();
  }

  offer(id: number): OfferRecord | undefined {
    return this.offerById.get(id, this.accountId) as OfferRecord | undefined;
  }

  lead(id: number): LeadRow | undefined {
    return this.leadById.get(id, this.accountId) as LeadRow | undefined;
  }

  leadByRedirectToken(token: string): LeadRow | undefined {
    return this.leadByToken.get(token) as LeadRow | undefined;
  }

  /** Accepts one offer: the lead is bought at its price and the lead's other offers are revoked. */
  acceptOffer(offer: OfferRecord, redirectToken: string, now: string): void {
    this.db.transaction(() => {
      this.setOfferStatus.run('accepted', offer.id);
      this.revokeOthers.run(offer.lead_id, offer.id);
      this.decideLead.run('A', offer.price, redirectToken, now, offer.lead_id);
    })();
  }

  /** The lead became unacceptable before an offer was taken: every offer is revoked, the lead rejected. */
  rejectPending(offer: OfferRecord): void {
    this.db.transaction(() => {
      this.setOfferStatus.run('revoked', offer.id);
      this.revokeOthers.run(offer.lead_id, offer.id);
      this.decideLead.run('R', null, null, null, offer.lead_id);
    })();
  }

  /** Lead ids in id order after (or before) a cursor position, `limit + 1` of them so the caller knows whether more exist. */
  leadIds(filter: LeadIdsFilter, position: { afterId?: number; beforeId?: number }, limit: number): number[] {
    const where = ['account_id = @account_id'];
    if (filter.from !== undefined) where.push('created_at >= @from');
    if (filter.before !== undefined) where.push('created_at < @before');
    if (position.afterId !== undefined) where.push('id > @afterId');
    if (position.beforeId !== undefined) where.push('id < @beforeId');
    const order = position.beforeId !== undefined ? 'DESC' : 'ASC';
    const params: Record<string, unknown> = { account_id: this.accountId, limit: limit + 1 };
    for (const [k, v] of Object.entries({ ...filter, ...position })) if (v !== undefined) params[k] = v;
    const ids = this.db
      .prepare(`SELECT id FROM leads WHERE ${where.join(' AND ')} ORDER BY id ${order} LIMIT @limit`)
      .pluck()
      .all(params) as number[];
    return ids;
  }

  /** An accepted lead with this SSN or email, accepted at or after `since` (null = ever). */
  wasPurchased(ssn: string | null, email: string | null, since: string | null): boolean {
    return (
      this.purchased.get({ account_id: this.accountId, ssn, email: email?.toLowerCase() ?? null, since }) !== undefined
    );
  }

  /** Any lead with this SSN or email that was decisioned at or after `since`. */
  wasDecisioned(ssn: string | null, email: string | null, since: string | null): boolean {
    return (
      this.decisioned.get({ account_id: this.accountId, ssn, email: email?.toLowerCase() ?? null, since }) !== undefined
    );
  }
}

export function leadFacts(row: LeadRow): LeadFacts {
  return {
    id: row.id,
    account_id: row.account_id,
    campaign_id: row.campaign_id,
    campaign_name: row.campaign_name,
    result: row.result,
    price: row.price,
    created_at: row.created_at,
    accepted_at: row.accepted_at,
    request: JSON.parse(row.request_json) as LegacyLead,
  };
}
