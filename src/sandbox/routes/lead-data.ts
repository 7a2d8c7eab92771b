import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEFAULT_LEAD_IDS_PER_PAGE, LeadIdsQuerySchema, LeadQuerySchema, zodErrorBag } from '../../schema/index.js';
import type { SandboxContext } from '../context.js';
import { decodeCursor, encodeCursor } from '../domain/cursor.js';
import { DICTIONARY, isKnownMapId, leadValues } from '../domain/dictionary.js';
import { sendNotFound, sendValidationError } from '../http/errors.js';
import { requestPath } from '../http/origin.js';
import { LeadStore, leadFacts } from '../store/leads.js';
import type { LeadIdsFilter } from '../store/leads.js';
import { ACCOUNT_ID } from '../store/seed.js';

const BASE = '/lead-data';
const DAY_MS = 86_400_000;

/** The request's query string without `cursor`, plus the given cursor: how the next and prev links are built. */
function linkWithCursor(origin: string, request: FastifyRequest, cursor: string | null): string | null {
  if (cursor === null) return null;
  const url = new URL(request.url, origin);
  url.searchParams.delete('cursor');
  url.searchParams.append('cursor', cursor);
  return url.toString();
}

export function registerLeadDataRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const leads = new LeadStore(ctx.db, ACCOUNT_ID);

  app.get<{ Querystring: Record<string, unknown> }>(`${BASE}/lead-ids`, async (request, reply) => {
    const parsed = LeadIdsQuerySchema.safeParse(request.query);
    if (!parsed.success) return sendValidationError(reply, zodErrorBag(parsed.error));
    const { date, datetime, cursor: cursorText } = parsed.data;
    const perPage = parsed.data.per_page ?? DEFAULT_LEAD_IDS_PER_PAGE;
    const cursor = cursorText === undefined ? undefined : decodeCursor(cursorText);
    if (cursorText !== undefined && cursor === undefined) {
      return sendValidationError(reply, { cursor: ['is not a cursor from a lead-ids link'] });
    }

    // date = that UTC day; datetime = created at or after; both = both bounds apply.
    const filter: LeadIdsFilter = {};
    if (date !== undefined) {
      filter.from = `${date}T00:00:00Z`;
      filter.before = new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 19) + 'Z';
    }
    if (datetime !== undefined && (filter.from === undefined || datetime > filter.from)) filter.from = datetime;

    const backwards = cursor !== undefined && !cursor.pointsToNextItems;
    const fetched = leads.leadIds(filter, backwards ? { beforeId: cursor.id } : { afterId: cursor?.id }, perPage);
    const hasMore = fetched.length > perPage;
    const ids = fetched.slice(0, perPage);
    if (backwards) ids.reverse();

    let next: string | null = null;
    let prev: string | null = null;
    if (ids.length > 0) {
      const first = ids[0]!;
      const last = ids[ids.length - 1]!;
      if (backwards) {
        next = encodeCursor({ id: last, pointsToNextItems: true });
        if (hasMore) prev = encodeCursor({ id: first, pointsToNextItems: false });
      } else {
        if (hasMore) next = encodeCursor({ id: last, pointsToNextItems: true });
        if (cursor !== undefined) prev = encodeCursor({ id: first, pointsToNextItems: false });
      }
    }
    return {
      data: ids,
      links: {
        first: null,
        last: null,
        prev: linkWithCursor(ctx.publicOrigin, request, prev),
        next: linkWithCursor(ctx.publicOrigin, request, next),
      },
      meta: { path: requestPath(ctx.publicOrigin, request), per_page: perPage, next_cursor: next, prev_cursor: prev },
    };
  });

  app.get<{ Params: { leadId: string }; Querystring: Record<string, unknown> }>(
    `${BASE}/leads/:leadId`,
    async (request, reply) => {
      const id = /^\d{1,15}$/.test(request.params.leadId) ? Number(request.params.leadId) : undefined;
      const row = id === undefined ? undefined : leads.lead(id);
      if (!row) return sendNotFound(reply);
      // Repeated map_ids[]=m1&map_ids[]=m2 arrive under "map_ids[]"; a plain map_ids is accepted too,
      // and numbered ones (map_ids[0]=m1&map_ids[1]=m2), which PHP reads as the same array.
      const raw = request.query['map_ids[]'] ?? request.query.map_ids ?? numberedList(request.query, 'map_ids');
      const parsed = LeadQuerySchema.safeParse(raw === undefined ? {} : { map_ids: raw });
      if (!parsed.success) return sendValidationError(reply, zodErrorBag(parsed.error));
      const mapIds = parsed.data.map_ids;
      if (mapIds) {
        const errors: Record<string, string[]> = {};
        mapIds.forEach((mapId, i) => {
          if (!isKnownMapId(mapId)) errors[`map_ids.${i}`] = [`${mapId} is not in the data dictionary`];
        });
        if (Object.keys(errors).length > 0) return sendValidationError(reply, errors);
      }
      return { data: leadValues(leadFacts(row), mapIds) };
    },
  );

  app.get(`${BASE}/dictionary`, async () => ({ data: DICTIONARY }));
}

/** `name[0]=a&name[1]=b` as PHP reads it: the values in index order; undefined when there are none. */
function numberedList(query: Record<string, unknown>, name: string): unknown[] | undefined {
  const pattern = new RegExp(`^${name}\\[(\\d+)\\]$`);
  const found: [number, unknown][] = [];
  for (const [key, value] of Object.entries(query)) {
    const m = pattern.exec(key);
    if (m) found.push([Number(m[1]), value]);
  }
  if (found.length === 0) return undefined;
  return found.sort((a, b) => a[0] - b[0]).flatMap(([, value]) => (Array.isArray(value) ? value : [value]));
}
