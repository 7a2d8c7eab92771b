import type { LeadIdsParams } from '../api/client.js';
import { MAX_LEAD_ID_PAGES, PageGuard } from '../api/paging.js';
import type { LeadIdsPage } from '../schema/index.js';

export interface LeadIdsSource {
  leadIds(params: LeadIdsParams, options?: { signal?: AbortSignal }): Promise<LeadIdsPage>;
}

export interface LeadIdsOptions {
  date?: string;
  datetime?: string;
  /** Page size asked of the service (its default is 100). */
  perPage?: number;
  /** Where to start: a cursor printed by an earlier run. */
  cursor?: string;
  /** Stop after this many ids. */
  limit?: number;
  /** Follow the cursor to the end. Without it (and without limit) one page is read. */
  all?: boolean;
  signal?: AbortSignal;
}

/** Filled in as the pages arrive; read it once the iteration ends. */
export interface LeadIdsProgress {
  pages: number;
  ids: number;
  /** Where to continue, when the run stopped before the end; undefined when the end was reached. */
  nextCursor?: string;
  /** Hears of each page as it arrives (progress on stderr). */
  onPage?: (pages: number, ids: number) => void;
}

export const DEFAULT_PER_PAGE = 100;

/**
 * Streams lead ids page by page. With a limit, the last page asks for exactly the ids still
 * wanted, so the cursor the service returns continues right after the last id printed. A cursor
 * that comes back, or ids sent twice, end the run (PagingError) before that page is passed on.
 */
export async function* streamLeadIds(
  api: LeadIdsSource,
  options: LeadIdsOptions,
  progress: LeadIdsProgress,
): AsyncGenerator<number[]> {
  const perPage = options.perPage ?? DEFAULT_PER_PAGE;
  const follow = options.all === true || options.limit !== undefined;
  let cursor = options.cursor;
  progress.nextCursor = undefined;
  const guard = new PageGuard<number>('lead ids', MAX_LEAD_ID_PAGES, cursor);
  for (;;) {
    const remaining = options.limit === undefined ? Infinity : options.limit - progress.ids;
    if (remaining <= 0) return;
    const size = Math.min(perPage, remaining);
    const page = await api.leadIds(
      {
        date: options.date,
        datetime: options.datetime,
        // The service's default is 100; only say otherwise when asked to, or to land exactly on a limit.
        per_page: options.perPage !== undefined || size !== DEFAULT_PER_PAGE ? size : undefined,
        cursor,
      },
      { signal: options.signal },
    );
    const ids = page.data.slice(0, Number.isFinite(remaining) ? remaining : undefined);
    const next = nextCursorOf(page);
    guard.check({ ids, nextCursor: follow && ids.length > 0 ? next : undefined });
    progress.pages++;
    progress.ids += ids.length;
    progress.onPage?.(progress.pages, progress.ids);
    progress.nextCursor = ids.length > 0 ? next : undefined;
    if (ids.length > 0) yield ids;
    if (!next || ids.length === 0 || next === cursor || !follow) return;
    cursor = next;
  }
}

export function nextCursorOf(page: LeadIdsPage): string | undefined {
  const fromMeta = page.meta?.next_cursor;
  if (fromMeta) return fromMeta;
  const link = page.links?.next;
  if (!link) return undefined;
  try {
    return new URL(link).searchParams.get('cursor') ?? undefined;
  } catch {
    return undefined;
  }
}
