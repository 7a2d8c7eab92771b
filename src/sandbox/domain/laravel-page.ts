/** Laravel's LengthAwarePaginator rendered as JSON, including its `links` window. */
export interface PageLink {
  url: string | null;
  label: string;
  active: boolean;
}

export interface LaravelPage<T> {
  current_page: number;
  data: T[];
  first_page_url: string;
  from: number | null;
  last_page: number;
  last_page_url: string;
  links: PageLink[];
  next_page_url: string | null;
  path: string;
  per_page: number;
  prev_page_url: string | null;
  to: number | null;
  total: number;
}

/** Pages shown on each side of the current one before Laravel collapses the rest into "...". */
const ON_EACH_SIDE = 3;

/** A page number from the `page` query parameter; like Laravel, anything else means page 1. */
export function requestedPage(raw: unknown): number {
  const value = Array.isArray(raw) ? raw[0] : raw;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return 1;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 1 ? n : 1;
}

export function laravelPage<T>(path: string, page: number, perPage: number, total: number, data: T[]): LaravelPage<T> {
  const lastPage = Math.max(1, Math.ceil(total / perPage));
  const url = (p: number) => `${path}?page=${p}`;
  const from = data.length > 0 ? (page - 1) * perPage + 1 : null;
  const prev = page > 1 ? url(page - 1) : null;
  const next = page < lastPage ? url(page + 1) : null;
  const links: PageLink[] = [{ url: prev, label: '&laquo; Previous', active: false }];
  for (const item of pageWindow(page, lastPage)) {
    links.push(
      item === '...'
        ? { url: null, label: '...', active: false }
        : { url: url(item), label: String(item), active: item === page },
    );
  }
  links.push({ url: next, label: 'Next &raquo;', active: false });
  return {
    current_page: page,
    data,
    first_page_url: url(1),
    from,
    last_page: lastPage,
    last_page_url: url(lastPage),
    links,
    next_page_url: next,
    path,
    per_page: perPage,
    prev_page_url: prev,
    to: from === null ? null : from + data.length - 1,
    total,
  };
}

/** Laravel's UrlWindow: every page when there are few, else the ends and a slider around the current page. */
function pageWindow(current: number, last: number): (number | '...')[] {
  const range = (a: number, b: number) => Array.from({ length: Math.max(0, b - a + 1) }, (_, i) => a + i);
  if (last < ON_EACH_SIDE * 2 + 8) return range(1, last);
  const window = ON_EACH_SIDE + 4;
  const start = range(1, 2);
  const finish = range(last - 1, last);
  if (current <= window) return [...range(1, window + ON_EACH_SIDE), '...', ...finish];
  if (current > last - window) return [...start, '...', ...range(last - (window + (ON_EACH_SIDE - 1)), last)];
  return [...start, '...', ...range(current - ON_EACH_SIDE, current + ON_EACH_SIDE), '...', ...finish];
}
