import type { FastifyInstance, FastifyRequest } from 'fastify';
import { LegacyLeadSchema, PRICE_REJECT_ERRORS, PriceRejectAcceptSchema, formatZodIssues } from '../../schema/index.js';
import type { LegacyLead } from '../../schema/index.js';
import { isoSeconds } from '../clock.js';
import type { SandboxContext } from '../context.js';
import { offerPrices, suppressedBy } from '../domain/suppression.js';
import { randomHex } from '../random.js';
import { LeadStore, leadFacts } from '../store/leads.js';
import { ListStore } from '../store/lists.js';
import { ACCOUNT_ID } from '../store/seed.js';
import type { Campaign } from '../store/seed.js';

export const LEGACY_PATH = '/api/legacy';
export const REDIRECT_PATH = '/redirect';

interface LegacyAnswer {
  status: 'OK' | 'ERROR';
  result: 'A' | 'R' | 'P' | null;
  redirect_url: string | null;
  errors: string[] | null;
  lead_id?: number;
  price_reject?: { api_key: string; offers: { id: number; price: number; expires_in: number }[] };
}

const refused = (errors: string[]): LegacyAnswer => ({ status: 'ERROR', result: null, redirect_url: null, errors });

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The unversioned lead post and its price reject follow-up, told apart by
 * price_reject_offer_id. Answers always use the legacy envelope with HTTP 200; a refused
 * request has status ERROR and errors naming each field.
 */
export function registerLegacyRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const leads = new LeadStore(ctx.db, ACCOUNT_ID);
  const lists = new ListStore(ctx.db, ACCOUNT_ID);
  const isListed = lists.isListed.bind(lists);
  const byApiKey = new Map(ctx.account.campaigns.map((c) => [c.api_key, c]));
  const byCode = new Map(ctx.account.campaigns.map((c) => [c.campaign_code, c]));
  const leadCount = ctx.db.prepare('SELECT count(*) FROM leads').pluck();
  const redirectUrl = (_request: FastifyRequest, token: string) => `${ctx.publicOrigin}${REDIRECT_PATH}/${token}`;

  function post(request: FastifyRequest, body: Obj): LegacyAnswer {
    const parsed = LegacyLeadSchema.safeParse(body);
    const errors = parsed.success
      ? []
      : formatZodIssues(parsed.error).map(({ path, message }) => (path ? `${path}: ${message}` : message));
    let campaign: Campaign | undefined;
    if (typeof body.api_key === 'string' && body.api_key !== '') {
      campaign = byApiKey.get(body.api_key);
      if (!campaign) errors.unshift('api_key: no campaign has this API key');
    } else if (typeof body.campaign_code === 'string' && body.campaign_code !== '') {
      campaign = byCode.get(body.campaign_code);
      if (!campaign) errors.unshift('campaign_code: no campaign has this code');
    }
    if (!parsed.success || !campaign) return refused(errors);

    const lead: LegacyLead = parsed.data;
    const now = ctx.clock.now();
    const stamp = isoSeconds(now);
    if (suppressedBy(lead, isListed)) {
      const { id } = leads.create({
        campaign,
        result: 'R',
        price: null,
        redirectToken: null,
        request: lead,
        now: stamp,
      });
      return { status: 'OK', result: 'R', redirect_url: null, errors: null, lead_id: id };
    }
    if (campaign.price_reject) {
      const expiresAt = isoSeconds(new Date(now.getTime() + ctx.offerTtlSeconds * 1000));
      const sequence = (leadCount.get() as number) + 1;
      const prices = offerPrices(campaign.price, sequence);
      const { id, offerIds } = leads.create(
        { campaign, result: 'P', price: null, redirectToken: null, request: lead, now: stamp },
        prices.map((price) => ({ price, expiresAt })),
      );
      return {
        status: 'OK',
        result: 'P',
        redirect_url: null,
        errors: null,
        lead_id: id,
        price_reject: {
          api_key: campaign.api_key,
          offers: offerIds.map((offerId, i) => ({ id: offerId, price: prices[i]!, expires_in: ctx.offerTtlSeconds })),
        },
      };
    }
    const token = randomHex(16);
    const { id } = leads.create({
      campaign,
      result: 'A',
      price: campaign.price,
      redirectToken: token,
      request: lead,
      now: stamp,
    });
    return { status: 'OK', result: 'A', redirect_url: redirectUrl(request, token), errors: null, lead_id: id };
  }

  function acceptOffer(request: FastifyRequest, body: Obj): LegacyAnswer {
    const parsed = PriceRejectAcceptSchema.safeParse(body);
    if (!parsed.success)
      return refused(
        formatZodIssues(parsed.error).map(({ path, message }) => (path ? `${path}: ${message}` : message)),
      );
    const campaign = byApiKey.get(parsed.data.api_key);
    if (!campaign) return refused(['api_key: no campaign has this API key']);
    if (!campaign.price_reject) return refused([PRICE_REJECT_ERRORS.notEnabled]);
    const offer = leads.offer(parsed.data.price_reject_offer_id);
    if (!offer || offer.campaign_id !== campaign.id) return refused([PRICE_REJECT_ERRORS.invalid]);
    if (offer.status === 'accepted') return refused([PRICE_REJECT_ERRORS.accepted]);
    if (offer.status === 'revoked') return refused([PRICE_REJECT_ERRORS.revoked]);
    const now = ctx.clock.now();
    if (offer.expires_at <= isoSeconds(now)) return refused([PRICE_REJECT_ERRORS.expired]);

    // The lists may have changed since the post: a lead that is now listed is rejected instead.
    const lead = leadFacts(leads.lead(offer.lead_id)!);
    if (suppressedBy(lead.request, isListed)) {
      leads.rejectPending(offer);
      return { status: 'OK', result: 'R', redirect_url: null, errors: null, lead_id: lead.id };
    }
    const token = randomHex(16);
    leads.acceptOffer(offer, token, isoSeconds(now));
    return { status: 'OK', result: 'A', redirect_url: redirectUrl(request, token), errors: null, lead_id: lead.id };
  }

  app.post(LEGACY_PATH, async (request) => {
    const body = request.body;
    if (!isObject(body)) return refused(['The request body must be a JSON object.']);
    const answer = Object.hasOwn(body, 'price_reject_offer_id') ? acceptOffer(request, body) : post(request, body);
    // lead_id is the sandbox's own addition; the interface's answer has status, result, redirect_url and errors.
    if (ctx.minimal) delete answer.lead_id;
    return answer;
  });

  // Where an accepted lead's redirect_url leads: a stand-in for the lender's landing page.
  app.get<{ Params: { token: string } }>(`${REDIRECT_PATH}/:token`, async (request, reply) => {
    const lead = /^[0-9a-f]{32}$/.test(request.params.token)
      ? leads.leadByRedirectToken(request.params.token)
      : undefined;
    if (!lead)
      return reply
        .code(404)
        .type('text/html')
        .send('<!doctype html><title>Not Found</title><p>No accepted lead has this address.</p>');
    return reply
      .type('text/html')
      .send(
        `<!doctype html><title>Lead ${lead.id}</title><p>Sandbox landing page for accepted lead ${lead.id} (${lead.campaign_name}).</p>`,
      );
  });
}
