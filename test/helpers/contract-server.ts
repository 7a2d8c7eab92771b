import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small service on 127.0.0.1 that answers only what the interface promises, and nothing of our
 * sandbox's own reading of it: lists under one prefix only, batches answered 2xx without a body,
 * upserts without a documented body, Laravel error bodies. `answer` scripts any other status for
 * any request (the status-taxonomy tests); `pages` scripts the paging of lead ids and lists.
 */

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
  json: unknown;
}

export interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface ContractServerOptions {
  /** Where lists are served; the other prefix answers a missing route. Default list-manager. */
  listsPrefix?: 'lead-management' | 'list-manager';
  /** How a batch is answered: `{}` (default), 204 without a body, or 200 with `{"data": {}}`. */
  batchAnswer?: 'empty-object' | 'no-content' | 'data-object';
  /** A scripted answer for any request (the token endpoint's too, before any credential check), or undefined for the default behaviour. */
  answer?: (req: SeenRequest, n: number) => Answer | undefined;
  /** Lead ids by date (YYYY-MM-DD); paged by a numeric cursor. */
  leadIds?: number[];
  /** Overrides the lead-ids page for a cursor (for looping cursors and repeated ids). */
  leadIdsPage?: (cursor: string | null, perPage: number) => { data: number[]; next: string | null } | undefined;
  /** Overrides the lists page (for page counts beyond reason). */
  listsPage?: (page: number) => { data: unknown[]; last_page: number; total: number } | undefined;
}

export const CONTRACT_CLIENT_ID = '9a6d1c2e-3b4f-4a5b-8c7d-0e1f2a3b4c5d';
export const CONTRACT_CLIENT_SECRET = 'Zx8Kq2Lm4Np6Rs8Tu0Vw2Xy4Za6Bc8De0Fg2Hi4';

const NOT_FOUND = { message: 'Not Found' };
const ROUTE_MISSING = (path: string) => ({ message: `The route ${path.replace(/^\//, '')} could not be found.` });

export interface ContractServer {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  seen: SeenRequest[];
  /** Requests other than the token endpoint's. */
  api(): SeenRequest[];
  tokens(): number;
  lists: Map<
    number,
    {
      id: number;
      name: string;
      type: string;
      items: string[];
      created_at: string;
      updated_at: string;
      deleted_at: null;
    }
  >;
  customers: Map<string, { loans: Set<string> }>;
  batches: unknown[];
  close(): Promise<void>;
}

export async function startContractServer(options: ContractServerOptions = {}): Promise<ContractServer> {
  const seen: SeenRequest[] = [];
  const lists: ContractServer['lists'] = new Map();
  const customers: ContractServer['customers'] = new Map();
  const batches: unknown[] = [];
  const prefix = `/api/v1/${options.listsPrefix ?? 'list-manager'}/lists`;
  let tokens = 0;
  let calls = 0;
  let nextListId = 1;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const body = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = body ? JSON.parse(body) : undefined;
      } catch {
        json = undefined;
      }
      const s: SeenRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
        json,
      };
      seen.push(s);
      const scripted = options.answer?.(s, ++calls);
      if (scripted) {
        send(res, scripted);
        return;
      }
      if (s.path === '/oauth/token' && s.method === 'POST') {
        const form = new URLSearchParams(body);
        if (form.get('client_id') !== CONTRACT_CLIENT_ID || form.get('client_secret') !== CONTRACT_CLIENT_SECRET) {
          send(res, {
            status: 401,
            body: {
              error: 'invalid_client',
              error_description: 'Client authentication failed',
              message: 'Client authentication failed',
            },
          });
          return;
        }
        tokens++;
        send(res, {
          status: 200,
          body: { token_type: 'Bearer', expires_in: 3600, access_token: `contract-token-${tokens}` },
        });
        return;
      }
      if (s.path !== '/api/legacy' && !/^Bearer contract-token-\d+$/.test(String(req.headers.authorization ?? ''))) {
        send(res, { status: 401, body: { message: 'Unauthenticated.' } });
        return;
      }
      send(res, route(s));
    });
  });

  const now = () => new Date().toISOString().replace(/\.\d+Z$/, '.000000Z');
  const listJson = (l: ReturnType<ContractServer['lists']['get']> & object) => ({
    id: l.id,
    name: l.name,
    type: l.type,
    deleted_at: null,
    created_at: l.created_at,
    updated_at: l.updated_at,
  });
  const invalid = (errors: Record<string, string[]>): Answer => ({
    status: 422,
    body: { message: 'The given data was invalid.', errors },
  });

  function route(s: SeenRequest): Answer {
    const { method, path } = s;
    const body = (s.json ?? {}) as Record<string, unknown>;
    if (path === prefix || path.startsWith(prefix + '/')) {
      const id = path === prefix ? undefined : path.slice(prefix.length + 1);
      if (id === undefined && method === 'GET') {
        const page = Number(s.query.get('page') ?? '1');
        const all = [...lists.values()].map(listJson);
        const scripted = options.listsPage?.(page);
        const perPage = 15;
        const data = scripted?.data ?? all.slice((page - 1) * perPage, page * perPage);
        const last = scripted?.last_page ?? Math.max(1, Math.ceil(all.length / perPage));
        const base = `http://127.0.0.1${prefix}`;
        return {
          status: 200,
          body: {
            current_page: page,
            data,
            first_page_url: `${base}?page=1`,
            from: data.length ? (page - 1) * perPage + 1 : null,
            last_page: last,
            last_page_url: `${base}?page=${last}`,
            links: [],
            next_page_url: page < last ? `${base}?page=${page + 1}` : null,
            path: base,
            per_page: perPage,
            prev_page_url: page > 1 ? `${base}?page=${page - 1}` : null,
            to: data.length ? (page - 1) * perPage + data.length : null,
            total: scripted?.total ?? all.length,
          },
        };
      }
      if (id === undefined && method === 'POST') {
        if (typeof body.name !== 'string' || typeof body.type !== 'string' || !Array.isArray(body.list))
          return invalid({ name: ['The name field is required.'] });
        const l = {
          id: nextListId++,
          name: body.name,
          type: body.type,
          items: body.list as string[],
          created_at: now(),
          updated_at: now(),
          deleted_at: null,
        };
        lists.set(l.id, l);
        return { status: 201, body: { data: listJson(l) } };
      }
      if (id !== undefined && /^\d+$/.test(id)) {
        const l = lists.get(Number(id));
        if (!l) return { status: 404, body: NOT_FOUND };
        if (method === 'GET') return { status: 200, body: { data: listJson(l) } };
        if (method === 'PUT') {
          if (typeof body.name !== 'string' || typeof body.type !== 'string' || !Array.isArray(body.list))
            return invalid({ list: ['The list field is required.'] });
          Object.assign(l, { name: body.name, type: body.type, items: body.list, updated_at: now() });
          return { status: 200, body: { data: listJson(l) } };
        }
        return { status: 405, body: { message: `The ${method} method is not supported for route ${path.slice(1)}.` } };
      }
      return { status: 404, body: ROUTE_MISSING(path) };
    }
    if (method === 'POST' && path === '/api/v1/loan-performance/customers') {
      const id = typeof body.customer_id === 'string' ? body.customer_id : undefined;
      if (!id) return invalid({ customer_id: ['The customer id field is required.'] });
      const known = customers.has(id);
      const loan = (body.lead_loan as { loan_id?: string } | undefined)?.loan_id;
      customers.set(id, { loans: new Set([...(customers.get(id)?.loans ?? []), ...(loan ? [loan] : [])]) });
      return { status: known ? 200 : 201, body: undefined };
    }
    const single = /^\/api\/v1\/loan-performance\/customers\/([^/]+)\/(loans|payments)$/.exec(path);
    if (method === 'POST' && single) {
      const customer = customers.get(decodeURIComponent(single[1]!));
      if (!customer) return { status: 404, body: NOT_FOUND };
      if (single[2] === 'loans') customer.loans.add(String(body.loan_id));
      else if (!customer.loans.has(String(body.loan_id))) return { status: 404, body: NOT_FOUND };
      return { status: 201, body: undefined };
    }
    if (method === 'POST' && path === '/api/v1/loan-performance/batches/customers') {
      batches.push(body);
      for (const c of (body.customers as Array<{ customer_id: string; loans?: Array<{ loan_id: string }> }>) ?? []) {
        customers.set(c.customer_id, { loans: new Set((c.loans ?? []).map((l) => l.loan_id)) });
      }
      if (options.batchAnswer === 'no-content') return { status: 204 };
      return { status: 200, body: options.batchAnswer === 'data-object' ? { data: {} } : {} };
    }
    if (method === 'GET' && path === '/api/v1/lead-data/lead-ids') {
      const perPage = Number(s.query.get('per_page') ?? '100');
      const cursor = s.query.get('cursor');
      const scripted = options.leadIdsPage?.(cursor, perPage);
      const all = options.leadIds ?? [];
      const start = cursor ? Number(cursor) : 0;
      const data = scripted?.data ?? all.slice(start, start + perPage);
      const next = scripted ? scripted.next : start + perPage < all.length ? String(start + perPage) : null;
      const base = 'http://127.0.0.1/api/v1/lead-data/lead-ids';
      return {
        status: 200,
        body: {
          data,
          links: { first: null, last: null, prev: null, next: next ? `${base}?cursor=${next}` : null },
          meta: { path: base, per_page: perPage, next_cursor: next, prev_cursor: cursor },
        },
      };
    }
    const lead = /^\/api\/v1\/lead-data\/leads\/(\d+)$/.exec(path);
    if (method === 'GET' && lead) {
      const id = Number(lead[1]);
      if (!(options.leadIds ?? []).includes(id)) return { status: 404, body: NOT_FOUND };
      return { status: 200, body: { data: { m1: id, m2: 10000 + id } } };
    }
    if (method === 'GET' && path === '/api/v1/lead-data/dictionary') {
      return {
        status: 200,
        body: {
          data: [
            {
              id: 'm1',
              category: 'Lead',
              subcategory: 'Internal Lead Data',
              name: 'Lead ID',
              column: 'lead_id',
              type: 'Number',
            },
            {
              id: 'm2',
              category: 'Lead',
              subcategory: 'Internal Lead Data',
              name: 'Account ID',
              column: 'account_id',
              type: 'Number',
            },
          ],
        },
      };
    }
    if (method === 'POST' && path === '/api/v1/lead-processing/dry-run') {
      if (!body.social_security_number && !body.email)
        return invalid({
          social_security_number: ['The social security number field is required when email is not present.'],
        });
      return { status: 200, body: { data: { pass: true } } };
    }
    if (method === 'GET' && path === '/api/v1/resources/management-systems')
      return { status: 200, body: { data: [{ id: 1, name: 'LMS One' }] } };
    if (method === 'POST' && path === '/api/legacy') {
      if (typeof body.api_key !== 'string' || body.api_key === '')
        return {
          status: 200,
          body: { status: 'ERROR', result: null, redirect_url: null, errors: ['The api key field is required.'] },
        };
      return {
        status: 200,
        body: { status: 'OK', result: 'A', redirect_url: 'https://example.invalid/r/1', errors: [] },
      };
    }
    return { status: 404, body: ROUTE_MISSING(path) };
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    clientId: CONTRACT_CLIENT_ID,
    clientSecret: CONTRACT_CLIENT_SECRET,
    seen,
    api: () => seen.filter((s) => s.path !== '/oauth/token'),
    tokens: () => tokens,
    lists,
    customers,
    batches,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function send(res: ServerResponse, answer: Answer): void {
  const headers: Record<string, string> = { ...(answer.headers ?? {}) };
  if (answer.body === undefined) {
    res.writeHead(answer.status, headers).end();
    return;
  }
  headers['content-type'] ??= 'application/json';
  res.writeHead(answer.status, headers).end(JSON.stringify(answer.body));
}
