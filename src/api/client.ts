/**
 * Typed client of the Lead Intake and Loan Performance Service.
 *
 * One keep-alive undici Agent per client; the access token is obtained lazily and
 * renewed once on a 401; requests that are safe to repeat are retried with backoff
 * on connection failures, 429 and 5xx (src/api/status.ts). No terminal concerns: what happens
 * is reported through `onEvent`, and failures are thrown as the typed errors of
 * src/errors.ts.
 */
import { Readable } from 'node:stream';
import { performance } from 'node:perf_hooks';
import type { LookupFunction } from 'node:net';
import type { Dispatcher } from 'undici';
import { errors as undiciErrors, request as undiciRequest } from './undici.js';
import { z } from 'zod';
import {
  BatchAnswerSchema,
  BatchResponseSchema,
  DictionaryResponseSchema,
  DryRunResponseSchema,
  LeadIdsPageSchema,
  LeadResponseSchema,
  LegacyResponseSchema,
  ListPageSchema,
  ListResponseSchema,
  ManagementSystemsResponseSchema,
  TokenResponseSchema,
  UpsertAnswerSchema,
  UpsertResponseSchema,
} from '../schema/index.js';
import type {
  BatchResponse,
  CustomerBatch,
  CustomerUpsert,
  DataAttribute,
  DryRunRequest,
  DryRunResponse,
  LeadIdsPage,
  LegacyResponse,
  List,
  ListPage,
  ListWrite,
  LoanUpsert,
  ManagementSystem,
  PaymentUpsert,
  PriceRejectAccept,
} from '../schema/index.js';
import { AuthError, NotFoundError } from '../errors.js';
import { MIN_PASSWORD_LENGTH, Redactor, redactError } from '../redact.js';
import {
  type FailedResponse,
  errorFromNetwork,
  errorFromOversizedAnswer,
  errorFromResponse,
  errorFromTokenResponse,
  isConnectPhaseError,
  isTransientNetworkError,
  networkErrorCode,
} from './errors.js';
import {
  createDispatcher,
  findPlainHttpRefusal,
  plainHttpError,
  type ProxyInUse,
  type ProxySettings,
} from './dispatcher.js';
import {
  DEFAULT_RETRY_POLICY,
  decideRetry,
  formatMs,
  parseRetryAfter,
  sleep,
  type RetryDecision,
  type RetryPolicy,
} from './retry.js';
import { MAX_LIST_PAGES, PageGuard } from './paging.js';
import { readAnswerBody } from './read-answer.js';
import {
  ANSWER_PROBLEM_WORDS,
  checkAnswer,
  isRetryableStatus,
  MAX_ANSWER_BYTES,
  type AnswerProblem,
  type AnswerRule,
} from './status.js';
import { TokenProvider, type CachedToken, type TokenCache, type TokenEvent } from './token.js';

/**
 * A request body produced on demand as JSON text in chunks, so that a large upload
 * streams in constant memory and a retry can produce it again from the start.
 */
export type BodySource = () => AsyncIterable<Uint8Array | string>;

/** A JSON value, or a BodySource that yields its serialised form. */
export type JsonBody<T> = T | BodySource;

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * `safe`: idempotent, repeated on any transient failure.
 * `unsent-only`: repeated only when the connection failed before the request left (the legacy lead post).
 */
export type RepeatPolicy = 'safe' | 'unsent-only';

export interface RequestOptions {
  /** Aborts the request and any wait between retries. */
  signal?: AbortSignal;
  /** Overrides the client's per-request timeout. */
  timeoutMs?: number;
}

export interface RequestSpec extends RequestOptions {
  method: HttpMethod;
  /** Path below the base URL, starting with "/". */
  path: string;
  /** Query parameters in order; keys may repeat (e.g. `map_ids[]`). */
  query?: Array<[string, string | number]>;
  /** JSON body or a streaming source; omitted for GET. */
  body?: unknown;
  /** Form-encoded body (the token request). */
  form?: Record<string, string>;
  auth: 'bearer' | 'none';
  repeat: RepeatPolicy;
  /** The object the request names ("list 42"): a 404 then says that object is unknown, not that the route is missing. */
  subject?: string;
  /** Non-2xx answers to return rather than throw (the legacy envelope). */
  accept?: (status: number, body: unknown) => boolean;
  /** Turns a final non-2xx answer into the error to throw (the token endpoint's OAuth errors). */
  mapError?: (failure: FailedResponse) => Error;
  /**
   * A 2xx answer is returned as received: the token endpoint's (it carries the new token) and the
   * legacy envelope's (its price_reject.api_key is the key to send back). Others have the
   * client's secrets taken out, as error answers always do.
   */
  rawAnswer?: boolean;
  /** What a 2xx must be to count as the answer (src/api/status.ts); one that is not is retried like a 5xx. */
  answer?: AnswerRule;
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /**
   * A 2xx: the parsed JSON, in the shape `answer` asks for; undefined when empty. A non-2xx that
   * `accept` took: parsed JSON, or the text when it was not JSON.
   */
  body: T;
  /** Attempts made, the first included. */
  attempts: number;
}

export type ApiEvent =
  | {
      type: 'response';
      method: HttpMethod;
      path: string;
      status: number;
      durationMs: number;
      attempt: number;
      /** Bytes of the request body sent with this attempt. */
      bytes: number;
    }
  | { type: 'network-error'; method: HttpMethod; path: string; code: string; durationMs: number; attempt: number }
  | { type: 'retry'; method: HttpMethod; path: string; attempt: number; delayMs: number; reason: string }
  | { type: 'give-up'; method: HttpMethod; path: string; attempts: number; reason: string }
  | { type: 'lists-path'; path: string; reason: string }
  | TokenEvent;

export { proxyFromEnv, type ProxySettings } from './dispatcher.js';

export interface ApiClientOptions {
  baseUrl: string;
  /** Needed only for bearer-protected endpoints (everything but the legacy post). */
  clientId?: string;
  clientSecret?: string;
  /** Persists the token across runs (the profile). */
  tokenCache?: TokenCache;
  /** Deadline of one attempt of a request: sending it, and its answer's headers and body. Default 60 s. */
  timeoutMs?: number;
  /** Largest answer read (MAX_ANSWER_BYTES); a larger one is refused unread. */
  maxAnswerBytes?: number;
  retry?: Partial<RetryPolicy>;
  onEvent?: (event: ApiEvent) => void;
  userAgent?: string;
  /** Clock, for tests. */
  now?: () => number;
  /** Randomness of the jitter, for tests. */
  random?: () => number;
  /** Proxies, as in HTTPS_PROXY / HTTP_PROXY / NO_PROXY, for https; plain http only ever goes to this machine. */
  proxy?: ProxySettings;
  /** Name resolution of direct connections (tests); the system's otherwise. For plain http every address must be loopback. */
  lookup?: LookupFunction;
  /**
   * Learns the secrets this client sends (client secret, tokens, api keys, proxy password) and
   * takes them out of every answer and error; share one to redact the rest of a run's output too.
   */
  redactor?: Redactor;
  /** Every request of this client ends within this many ms of the first one (a quick check): retries included. */
  deadlineMs?: number;
  /** False: a failed connection is not retried (a quick check says "unreachable" at once). Default true. */
  retryConnectionFailures?: boolean;
  /** A dispatcher of your own (tests); the client then does not close it. */
  dispatcher?: Dispatcher;
  /** Lists are served here and nowhere else (`--lists-path`): no probing, no fallback. */
  listsPath?: string;
  /** Remembers the lists path that worked, for the next run. */
  listsMemory?: ListsPathMemory;
}

/** Where the lists path that worked is kept between runs (per profile and base URL). */
export interface ListsPathMemory {
  get(): string | undefined;
  set(path: string): void;
}

/** Result of a single upsert: the service's status and stored object when it sends one. */
export interface UpsertResult {
  status: number;
  /** True on HTTP 201. */
  created: boolean;
  /** `data` of the answer when it has that shape. */
  data?: Record<string, unknown>;
  /** The answer as received. */
  raw: unknown;
}

/** Result of a batch upsert: the summary when the answer has the documented sandbox shape. */
export interface BatchResult {
  status: number;
  summary?: BatchResponse['data'];
  raw: unknown;
}

export type DryRunResult = DryRunResponse['data'];

/** The legacy envelope, plus the HTTP status it came with. */
export type LegacyResult = LegacyResponse & { httpStatus: number };

export interface LeadIdsParams {
  date?: string;
  datetime?: string;
  per_page?: number;
  cursor?: string;
}

/** Where lists are served: the interface's heading, then its request examples' path. */
export const LISTS_PATHS = ['/api/v1/lead-management/lists', '/api/v1/list-manager/lists'] as const;
const DEFAULT_TIMEOUT_MS = 60_000;

/** A single upsert's answer: the contract shows no body, so none is an answer too; one that comes must be a JSON object. */
export const UPSERT_ANSWER: AnswerRule = { schema: UpsertAnswerSchema, empty: 'always' };
/**
 * A batch's answer: a JSON object (or a 204), whose per-record detail, when it has one, is well
 * formed; anything else acknowledges nothing.
 */
export const BATCH_ANSWER: AnswerRule = { schema: BatchAnswerSchema, empty: 'no-content' };
const LIST_ANSWER: AnswerRule = { schema: ListResponseSchema };

export class ApiClient {
  readonly baseUrl: string;
  readonly clientId?: string;
  private readonly origin: string;
  private readonly basePath: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly policy: RetryPolicy;
  private readonly tokens: TokenProvider;
  private readonly now: () => number;
  private readonly random: () => number;
  private workingListsPath: string | undefined;
  private readonly proxy?: ProxyInUse;
  readonly redactor: Redactor;
  private deadlineAt: number | undefined;

  constructor(private readonly options: ApiClientOptions) {
    const url = new URL(options.baseUrl);
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
    this.origin = url.origin;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.clientId = options.clientId;
    this.redactor = options.redactor ?? new Redactor();
    this.redactor.add(options.clientSecret);
    this.ownsDispatcher = options.dispatcher === undefined;
    if (options.dispatcher) {
      this.dispatcher = options.dispatcher;
    } else {
      const made = createDispatcher(url, {
        agent: {
          keepAliveTimeout: 10_000,
          keepAliveMaxTimeout: 60_000,
          connect: { timeout: Math.min(options.timeoutMs ?? 10_000, 10_000) },
        },
        proxy: options.proxy,
        lookup: options.lookup,
      });
      this.dispatcher = made.dispatcher;
      this.proxy = made.proxy;
      this.redactor.add(made.proxy?.password, MIN_PASSWORD_LENGTH);
    }
    this.policy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    this.now = options.now ?? Date.now;
    this.random = options.random ?? Math.random;
    this.tokens = new TokenProvider({
      fetchToken: () => this.fetchToken(),
      cache: options.tokenCache,
      now: this.now,
      onEvent: options.onEvent,
    });
  }

  // ---- authentication -------------------------------------------------------------------------

  /** A token valid now (cached, or obtained). */
  token(): Promise<CachedToken> {
    return this.tokens.getToken();
  }

  /** Obtains a new token whatever is cached: proves the credentials work. */
  authenticate(): Promise<CachedToken> {
    return this.tokens.renewNow();
  }

  /**
   * Before a long run: a new token proves the credentials (a cached one outlives a rotated
   * secret); refused, that is the answer (exit 3). A token endpoint that is only down or slow is
   * no reason to stop a run that a cached token still carries: that one is used.
   */
  async checkCredentials(): Promise<CachedToken> {
    try {
      return await this.tokens.renewNow();
    } catch (err) {
      if (err instanceof AuthError) throw err;
      return this.tokens.getToken();
    }
  }

  // ---- lists ------------------------------------------------------------------------------------

  async createList(body: JsonBody<ListWrite>, options?: RequestOptions): Promise<List> {
    const { res } = await this.listsSend({ method: 'POST', suffix: '', body, answer: LIST_ANSWER, ...options });
    return (res.body as z.infer<typeof ListResponseSchema>).data;
  }

  async updateList(listId: number, body: JsonBody<ListWrite>, options?: RequestOptions): Promise<List> {
    const { res } = await this.listsSend({
      method: 'PUT',
      suffix: `/${encodeURIComponent(String(listId))}`,
      body,
      subject: `list ${listId}`,
      answer: LIST_ANSWER,
      ...options,
    });
    return (res.body as z.infer<typeof ListResponseSchema>).data;
  }

  async getList(listId: number, options?: RequestOptions): Promise<List> {
    const { res } = await this.listsSend({
      method: 'GET',
      suffix: `/${encodeURIComponent(String(listId))}`,
      subject: `list ${listId}`,
      answer: LIST_ANSWER,
      ...options,
    });
    return (res.body as z.infer<typeof ListResponseSchema>).data;
  }

  /** One page of list metadata (pages start at 1). */
  async listPage(page = 1, options?: RequestOptions): Promise<ListPage> {
    const { res } = await this.listsSend({
      method: 'GET',
      suffix: '',
      query: [['page', page]],
      answer: { schema: ListPageSchema },
      ...options,
    });
    return res.body as ListPage;
  }

  /**
   * Every list of the account, page after page; `onPage` hears of each as it arrives. Stops with a
   * PagingError on a page count beyond reason or a list sent twice.
   */
  async *allLists(
    options?: RequestOptions & { onPage?: (page: number, lastPage: number) => void },
  ): AsyncGenerator<List> {
    const { onPage, ...request } = options ?? {};
    const guard = new PageGuard<number>('lists', MAX_LIST_PAGES);
    for (let page = 1; ; page++) {
      const result = await this.listPage(page, request);
      const last = result.last_page ?? page;
      guard.check({ ids: result.data.map((l) => l.id), reportedPages: last });
      onPage?.(page, last);
      yield* result.data;
      if (page >= last || result.data.length === 0 || result.next_page_url === null) return;
    }
  }

  /** The lists path in use: the override, else the one that worked in this run or an earlier one. */
  listsPath(): string | undefined {
    return this.options.listsPath ?? this.workingListsPath ?? this.options.listsMemory?.get();
  }

  /**
   * Sends a lists request under the documented prefix, or under the other one when the service
   * has no such route (a deployment that serves lists only under `list-manager`, as the
   * interface's request examples do). The prefix that works is remembered (per profile and base
   * URL, by the caller's memory); `listsPath` overrides all of this.
   */
  private async listsSend(
    spec: Omit<RequestSpec, 'path' | 'auth' | 'repeat'> & { suffix: string },
  ): Promise<{ res: ApiResponse; path: string }> {
    const { suffix, ...rest } = spec;
    const request = (prefix: string): RequestSpec => ({
      ...rest,
      path: prefix + suffix,
      auth: 'bearer',
      repeat: 'safe',
    });
    if (this.options.listsPath)
      return { res: await this.send(request(this.options.listsPath)), path: this.options.listsPath + suffix };
    const known = this.workingListsPath ?? this.options.listsMemory?.get();
    const order = [...new Set([...(known ? [known] : []), ...LISTS_PATHS])];
    for (const prefix of order) {
      try {
        const res = await this.send(request(prefix));
        this.workingListsPath = prefix;
        if (prefix !== known) this.options.listsMemory?.set(prefix);
        return { res, path: prefix + suffix };
      } catch (err) {
        if (!(err instanceof NotFoundError) || !(await this.listsRouteMissing(prefix, suffix, spec.signal))) throw err;
        this.emit({ type: 'lists-path', path: prefix, reason: 'route missing (HTTP 404)' });
      }
    }
    throw new NotFoundError(
      `the service at ${this.baseUrl} serves no lists under ${order.join(' or ')} (HTTP 404: no such route)`,
      {
        hint: 'check the base URL; if this deployment serves lists under another path, give it with --lists-path (e.g. --lists-path /api/v1/list-manager/lists)',
        details: { tried: order },
      },
    );
  }

  /**
   * A 404 for the collection itself means the route is missing. For one list it may mean that list
   * is unknown: asking for the collection under the same prefix tells the two apart.
   */
  private async listsRouteMissing(prefix: string, suffix: string, signal?: AbortSignal): Promise<boolean> {
    if (suffix === '') return true;
    try {
      await this.send({
        method: 'GET',
        path: prefix,
        query: [['page', 1]],
        auth: 'bearer',
        repeat: 'safe',
        signal,
        answer: { schema: ListPageSchema },
      });
      return false;
    } catch (err) {
      // Any other answer to the probe leaves the first one standing: that list is unknown.
      return err instanceof NotFoundError;
    }
  }

  // ---- loan performance -------------------------------------------------------------------------

  async upsertCustomer(body: CustomerUpsert, options?: RequestOptions): Promise<UpsertResult> {
    return this.upsert('/api/v1/loan-performance/customers', body, options);
  }

  async upsertLoan(customerId: string, body: LoanUpsert, options?: RequestOptions): Promise<UpsertResult> {
    return this.upsert(`/api/v1/loan-performance/customers/${encodeURIComponent(customerId)}/loans`, body, options);
  }

  async upsertPayment(customerId: string, body: PaymentUpsert, options?: RequestOptions): Promise<UpsertResult> {
    return this.upsert(`/api/v1/loan-performance/customers/${encodeURIComponent(customerId)}/payments`, body, options);
  }

  /** Up to 1000 customers with their loans and payments; invalid objects are skipped by the service. */
  async upsertCustomerBatch(body: JsonBody<CustomerBatch>, options?: RequestOptions): Promise<BatchResult> {
    const res = await this.send({
      method: 'POST',
      path: '/api/v1/loan-performance/batches/customers',
      body,
      auth: 'bearer',
      repeat: 'safe',
      answer: BATCH_ANSWER,
      ...options,
    });
    const parsed = BatchResponseSchema.safeParse(res.body);
    return { status: res.status, summary: parsed.success ? parsed.data.data : undefined, raw: res.body };
  }

  // ---- lead data ----------------------------------------------------------------------------------

  /** One page of lead ids; follow `meta.next_cursor` for the next. */
  async leadIds(params: LeadIdsParams = {}, options?: RequestOptions): Promise<LeadIdsPage> {
    const query: Array<[string, string | number]> = [];
    if (params.date !== undefined) query.push(['date', params.date]);
    if (params.datetime !== undefined) query.push(['datetime', params.datetime]);
    if (params.per_page !== undefined) query.push(['per_page', params.per_page]);
    if (params.cursor !== undefined) query.push(['cursor', params.cursor]);
    const path = '/api/v1/lead-data/lead-ids';
    const res = await this.send({
      method: 'GET',
      path,
      query,
      auth: 'bearer',
      repeat: 'safe',
      answer: { schema: LeadIdsPageSchema },
      ...options,
    });
    return res.body as LeadIdsPage;
  }

  /** One lead's file builder columns, keyed by map id; `mapIds` filters them (sent as repeated map_ids[]). */
  async lead(
    leadId: number | string,
    mapIds: readonly string[] = [],
    options?: RequestOptions,
  ): Promise<Record<string, unknown>> {
    const path = `/api/v1/lead-data/leads/${encodeURIComponent(String(leadId))}`;
    const query = mapIds.map((id): [string, string] => ['map_ids[]', id]);
    const res = await this.send({
      method: 'GET',
      path,
      query,
      auth: 'bearer',
      repeat: 'safe',
      subject: `lead ${leadId}`,
      answer: { schema: LeadResponseSchema },
      ...options,
    });
    return (res.body as z.infer<typeof LeadResponseSchema>).data as Record<string, unknown>;
  }

  async dictionary(options?: RequestOptions): Promise<DataAttribute[]> {
    const path = '/api/v1/lead-data/dictionary';
    const res = await this.send({
      method: 'GET',
      path,
      auth: 'bearer',
      repeat: 'safe',
      answer: { schema: DictionaryResponseSchema },
      ...options,
    });
    return (res.body as z.infer<typeof DictionaryResponseSchema>).data;
  }

  // ---- dry run, systems ---------------------------------------------------------------------------

  async dryRun(body: DryRunRequest, options?: RequestOptions): Promise<DryRunResult> {
    const path = '/api/v1/lead-processing/dry-run';
    const res = await this.send({
      method: 'POST',
      path,
      body,
      auth: 'bearer',
      repeat: 'safe',
      answer: { schema: DryRunResponseSchema },
      ...options,
    });
    return (res.body as DryRunResponse).data;
  }

  async managementSystems(options?: RequestOptions): Promise<ManagementSystem[]> {
    const path = '/api/v1/resources/management-systems';
    const res = await this.send({
      method: 'GET',
      path,
      auth: 'bearer',
      repeat: 'safe',
      answer: { schema: ManagementSystemsResponseSchema },
      ...options,
    });
    return (res.body as z.infer<typeof ManagementSystemsResponseSchema>).data;
  }

  // ---- legacy (campaign api_key in the body, no bearer; never repeated once sent) ----------------

  /** Posts a lead. The envelope is returned for OK and ERROR alike; look at `status` and `result`. */
  async legacyPost(body: Record<string, unknown>, options?: RequestOptions): Promise<LegacyResult> {
    return this.legacy(body, options);
  }

  /** Accepts a price-reject offer; same envelope as the lead post. */
  async priceRejectAccept(body: PriceRejectAccept, options?: RequestOptions): Promise<LegacyResult> {
    return this.legacy(body, options);
  }

  // ---- plumbing -----------------------------------------------------------------------------------

  /** Frees the connections. Call once when done. */
  async close(): Promise<void> {
    if (this.ownsDispatcher) await this.dispatcher.close();
  }

  /**
   * Sends one request with the token, the 401 renewal and the retries. Returns any 2xx answer;
   * throws the typed error for everything else.
   */
  async send<T = unknown>(spec: RequestSpec): Promise<ApiResponse<T>> {
    try {
      return await this.sendUnredacted<T>(spec);
    } catch (error) {
      // Whatever an answer or a failure quoted, no secret of this client leaves in an error.
      throw redactError(error, this.redactor);
    }
  }

  private async sendUnredacted<T>(spec: RequestSpec): Promise<ApiResponse<T>> {
    const target = spec.path + encodeQuery(spec.query);
    this.deadlineAt ??= this.options.deadlineMs === undefined ? undefined : performance.now() + this.options.deadlineMs;
    let attempt = 0;
    let waitedMs = 0;
    let renewedAfter401 = false;
    let token: string | undefined;
    for (;;) {
      attempt++;
      if (spec.auth === 'bearer' && token === undefined) token = await this.bearerToken();
      const started = performance.now();
      const left = this.timeLeft();
      let res: RawResponse;
      try {
        const bounded =
          left === Infinity
            ? spec
            : {
                ...spec,
                timeoutMs: Math.max(MIN_ATTEMPT_MS, Math.min(spec.timeoutMs ?? this.options.timeoutMs ?? left, left)),
              };
        res = await this.once(bounded, target, token);
      } catch (caught) {
        if (spec.signal?.aborted) throw spec.signal.reason ?? caught;
        // A failure of the caller's body source (an unreadable input file) is not a network problem.
        if (caught instanceof BodySourceError) throw caught.cause;
        const refusal = findPlainHttpRefusal(caught);
        if (refusal) throw plainHttpError(this.baseUrl, refusal);
        const error = caught;
        const code = networkErrorCode(error) ?? 'unknown';
        this.emit({
          type: 'network-error',
          method: spec.method,
          path: target,
          code,
          durationMs: performance.now() - started,
          attempt,
        });
        const repeatable =
          this.options.retryConnectionFailures !== false &&
          (spec.repeat === 'safe' ? isTransientNetworkError(error) : isConnectPhaseError(error));
        if (!repeatable) {
          throw errorFromNetwork({
            method: spec.method,
            path: target,
            baseUrl: this.baseUrl,
            attempts: attempt,
            error,
            notRepeatedBecauseUnsafe: spec.repeat === 'unsent-only' && isTransientNetworkError(error),
            proxy: this.proxy,
          });
        }
        const step = await this.retryStep(spec, target, attempt, waitedMs, undefined, code);
        if (!step.retried) {
          throw errorFromNetwork({
            method: spec.method,
            path: target,
            baseUrl: this.baseUrl,
            attempts: attempt,
            error,
            gaveUp: step.reason,
            proxy: this.proxy,
          });
        }
        waitedMs = step.waitedMs;
        continue;
      }
      this.emit({
        type: 'response',
        method: spec.method,
        path: target,
        status: res.status,
        durationMs: performance.now() - started,
        attempt,
        bytes: res.sent,
      });

      if (res.kind === 'too-large') {
        throw errorFromOversizedAnswer({
          method: spec.method,
          path: target,
          baseUrl: this.baseUrl,
          attempts: attempt,
          status: res.status,
          limit: res.limit,
          declared: res.declared,
        });
      }
      let answered: unknown;
      let malformed: AnswerProblem | undefined;
      if (res.status >= 200 && res.status < 300) {
        const check = checkAnswer(
          res.status,
          headerValue(res.headers['content-type']),
          res.text,
          res.bytes,
          spec.answer,
        );
        if (check.ok) answered = check.body;
        else malformed = check.problem;
      } else {
        answered = parseBody(res.text, res.headers['content-type']);
      }
      if ((res.status >= 200 && res.status < 300 && !malformed) || spec.accept?.(res.status, answered)) {
        const body = spec.rawAnswer ? answered : this.redactor.knownIn(answered);
        return { status: res.status, headers: res.headers, body: body as T, attempts: attempt };
      }
      if (res.status === 401 && spec.auth === 'bearer' && !renewedAfter401 && token !== undefined) {
        renewedAfter401 = true;
        token = await this.tokens.refused(token);
        attempt--; // the renewal is not a retry of a failure
        continue;
      }
      const failed = {
        method: spec.method,
        path: target,
        baseUrl: this.baseUrl,
        attempts: attempt,
        status: res.status,
        // An answer may echo the request (its headers, its form): never the secrets it carried.
        // A malformed 2xx is kept as the start of its text, which the message quotes.
        body: this.redactor.details(malformed ? res.text.slice(0, MALFORMED_TEXT_KEPT) : answered),
        subject: spec.subject,
        repeatable: spec.repeat === 'safe',
        auth: spec.auth,
        ...(malformed ? { malformed } : {}),
        ...(res.status >= 300 && res.status < 400
          ? { location: this.redactor.text(headerValue(res.headers.location) ?? '') }
          : {}),
      };
      // A malformed 2xx is most often something in the way (a portal, a proxy): worth repeating like a 5xx.
      if ((malformed !== undefined || isRetryableStatus(res.status)) && spec.repeat === 'safe') {
        const retryAfter = parseRetryAfter(res.headers['retry-after'], this.now());
        const step = await this.retryStep(
          spec,
          target,
          attempt,
          waitedMs,
          res.status === 429 || res.status === 503 ? retryAfter : undefined,
          malformed ? `HTTP ${res.status}, ${ANSWER_PROBLEM_WORDS[malformed.kind]}` : `HTTP ${res.status}`,
        );
        if (step.retried) {
          waitedMs = step.waitedMs;
          continue;
        }
        throw (spec.mapError ?? errorFromResponse)({ ...failed, gaveUp: step.reason });
      }
      throw (spec.mapError ?? errorFromResponse)(failed);
    }
  }

  /**
   * After a failed attempt that may be repeated: waits for the next attempt (told as a `retry`
   * event) and returns the request's total wait so far, or says why there is none (a `give-up`).
   */
  private async retryStep(
    spec: RequestSpec,
    target: string,
    attempt: number,
    waitedMs: number,
    retryAfterMs: number | undefined,
    reason: string,
  ): Promise<{ retried: true; waitedMs: number } | { retried: false; reason: string | undefined }> {
    const decision = this.withinDeadline(decideRetry(attempt, waitedMs, this.policy, retryAfterMs, this.random));
    if (!decision.retry) {
      this.emit({
        type: 'give-up',
        method: spec.method,
        path: target,
        attempts: attempt,
        reason: decision.reason ?? '',
      });
      return { retried: false, reason: decision.reason };
    }
    this.emit({ type: 'retry', method: spec.method, path: target, attempt, delayMs: decision.delayMs, reason });
    await sleep(decision.delayMs, spec.signal);
    return { retried: true, waitedMs: waitedMs + decision.delayMs };
  }

  /** Milliseconds left before the client's deadline (Infinity without one). */
  private timeLeft(): number {
    return this.deadlineAt === undefined ? Infinity : this.deadlineAt - performance.now();
  }

  /** A retry that could not start and get an answer before the deadline is not made. */
  private withinDeadline(decision: RetryDecision): RetryDecision {
    const left = this.timeLeft();
    if (!decision.retry || decision.delayMs + MIN_ATTEMPT_MS <= left) return decision;
    return {
      retry: false,
      delayMs: 0,
      reason: `no time left for another attempt within ${formatMs(this.options.deadlineMs ?? 0)}`,
    };
  }

  private async once(spec: RequestSpec, target: string, token: string | undefined): Promise<RawResponse> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (this.options.userAgent) headers['user-agent'] = this.options.userAgent;
    if (token !== undefined) {
      this.redactor.add(token);
      headers.authorization = `Bearer ${token}`;
    }
    let body: string | Readable | undefined;
    let sent = 0;
    const count = (chunk: Uint8Array | string) => {
      sent += typeof chunk === 'string' ? Buffer.byteLength(chunk) : chunk.byteLength;
    };
    if (spec.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(spec.form).toString();
    } else if (typeof spec.body === 'function') {
      headers['content-type'] = 'application/json';
      const stream: Readable = Readable.from(
        guardBodySource(spec.body as BodySource, (e) => bodySourceFailures.set(stream, e), count),
        { objectMode: false },
      );
      body = stream;
    } else if (spec.body !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.body);
    }
    const timeout = spec.timeoutMs ?? this.options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    // One deadline for the whole attempt: undici's own timeouts bound only each wait, so an answer
    // trickling a byte a second would never end.
    const deadline = new AbortController();
    let answering = false;
    const timer = setTimeout(
      () => deadline.abort(answering ? new undiciErrors.BodyTimeoutError() : new undiciErrors.HeadersTimeoutError()),
      timeout,
    );
    const signal = spec.signal ? AbortSignal.any([spec.signal, deadline.signal]) : deadline.signal;
    try {
      let res: Dispatcher.ResponseData;
      try {
        res = await undiciRequest(this.origin + this.basePath + target, {
          method: spec.method,
          headers,
          body,
          dispatcher: this.dispatcher,
          signal,
          headersTimeout: timeout,
          bodyTimeout: timeout,
        });
      } catch (error) {
        const sourceFailure = body instanceof Readable ? bodySourceFailures.get(body) : undefined;
        throw sourceFailure ? new BodySourceError(sourceFailure) : error;
      }
      answering = true;
      if (typeof body === 'string') count(body);
      const read = await readAnswerBody(res, this.options.maxAnswerBytes ?? MAX_ANSWER_BYTES);
      return read.kind === 'read'
        ? { kind: 'read', status: res.statusCode, headers: res.headers, text: read.text, bytes: read.bytes, sent }
        : {
            kind: 'too-large',
            status: res.statusCode,
            headers: res.headers,
            limit: read.limit,
            declared: read.declared,
            sent,
          };
    } catch (error) {
      if (deadline.signal.aborted && !spec.signal?.aborted) throw deadline.signal.reason;
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async bearerToken(): Promise<string> {
    if (!this.options.clientId) {
      throw new AuthError(`no credentials for ${this.baseUrl}`, {
        hint: 'run `leadctl auth login`, or set LEADCTL_CLIENT_ID and LEADCTL_CLIENT_SECRET (and LEADCTL_BASE_URL)',
      });
    }
    return this.tokens.get();
  }

  private async fetchToken(): Promise<CachedToken> {
    const clientId = this.options.clientId;
    const secret = this.options.clientSecret;
    if (!clientId) throw new AuthError(`no client id for ${this.baseUrl}`);
    if (!secret) {
      throw new AuthError(`no client secret is available for client ${clientId}, and there is no valid cached token`, {
        hint: 'the secret was not saved (--no-save-secret) or was forgotten: run `leadctl auth login` again, or set LEADCTL_CLIENT_SECRET',
      });
    }
    const requestedAt = this.now();
    const res = await this.send({
      method: 'POST',
      path: '/oauth/token',
      form: { grant_type: 'client_credentials', client_id: clientId, client_secret: secret },
      auth: 'none',
      repeat: 'safe',
      rawAnswer: true,
      mapError: (failure) => errorFromTokenResponse({ ...failure, clientId }),
      answer: { schema: TokenAnswerSchema },
    });
    const parsed = res.body as z.infer<typeof TokenAnswerSchema>;
    this.redactor.add(parsed.access_token);
    return {
      accessToken: parsed.access_token,
      obtainedAt: requestedAt,
      // Counted from when we asked, so clock drift during the request shortens, never lengthens, the life.
      expiresAt: requestedAt + tokenLifetimeMs(parsed.expires_in),
    };
  }

  private async upsert(path: string, body: unknown, options?: RequestOptions): Promise<UpsertResult> {
    const res = await this.send({
      method: 'POST',
      path,
      body,
      auth: 'bearer',
      repeat: 'safe',
      answer: UPSERT_ANSWER,
      ...options,
    });
    const parsed = UpsertResponseSchema.safeParse(res.body);
    const data = parsed.success ? (parsed.data.data as Record<string, unknown> | undefined) : undefined;
    return { status: res.status, created: res.status === 201, data, raw: res.body };
  }

  private async legacy(body: unknown, options?: RequestOptions): Promise<LegacyResult> {
    const path = '/api/legacy';
    this.redactor.add((body as { api_key?: unknown } | undefined)?.api_key as string | undefined);
    const res = await this.send({
      method: 'POST',
      path,
      body,
      auth: 'none',
      repeat: 'unsent-only',
      rawAnswer: true,
      // The legacy endpoint answers refusals in its own envelope, whatever the HTTP status.
      accept: (_status, answer) => LegacyResponseSchema.safeParse(answer).success,
      answer: { schema: LegacyResponseSchema },
      ...options,
    });
    const answer = res.body as LegacyResponse;
    // Everything but the key to send back with an offer (the caller masks it when it shows it).
    const offered = answer.price_reject;
    const scrubbed = this.redactor.knownIn(answer);
    return {
      ...scrubbed,
      ...(offered ? { price_reject: { ...scrubbed.price_reject!, api_key: offered.api_key } } : {}),
      httpStatus: res.status,
    };
  }

  private emit(event: ApiEvent): void {
    this.options.onEvent?.(event);
  }
}

/** The shortest an attempt is given before a deadline; less is not worth starting. */
const MIN_ATTEMPT_MS = 100;

/** A token answer: `expires_in` is read leniently (RFC 6749 only recommends it) and clamped below. */
const TokenAnswerSchema = TokenResponseSchema.extend({ expires_in: z.unknown().optional() });

const DEFAULT_TOKEN_LIFETIME_MS = 3_600_000;
/** A longer lifetime is taken as this one: Date cannot hold year 275760, and a year is plenty to renew in. */
export const MAX_TOKEN_LIFETIME_MS = 366 * 24 * 3_600_000;

/**
 * The lifetime an answer's `expires_in` gives a token: absent, unreadable, zero or negative means
 * the usual hour; absurdly long is clamped to a year.
 */
export function tokenLifetimeMs(expiresIn: unknown): number {
  const seconds = typeof expiresIn === 'string' && expiresIn.trim() !== '' ? Number(expiresIn) : expiresIn;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds <= 0) {
    return seconds === Infinity ? MAX_TOKEN_LIFETIME_MS : DEFAULT_TOKEN_LIFETIME_MS;
  }
  return Math.min(seconds * 1000, MAX_TOKEN_LIFETIME_MS);
}

type RawResponse = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Bytes of the request body that went out. */
  sent: number;
} & ({ kind: 'read'; text: string; bytes: number } | { kind: 'too-large'; limit: number; declared?: number });

/** Of a malformed 2xx, what is kept (and redacted) for its message: far more than it quotes. */
const MALFORMED_TEXT_KEPT = 4096;

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

export function createApiClient(options: ApiClientOptions): ApiClient {
  return new ApiClient(options);
}

/** The error a body source threw, remembered so it is not mistaken for a network failure. */
const bodySourceFailures = new WeakMap<Readable, unknown>();

class BodySourceError extends Error {
  constructor(override readonly cause: unknown) {
    super('the request body could not be produced');
  }
}

async function* guardBodySource(
  source: BodySource,
  onError: (error: unknown) => void,
  onChunk: (chunk: Uint8Array | string) => void,
): AsyncGenerator<Uint8Array | string> {
  try {
    for await (const chunk of source()) {
      onChunk(chunk);
      yield chunk;
    }
  } catch (error) {
    onError(error);
    throw error;
  }
}

/** A non-2xx body, for its message and field errors: JSON when it is, else its text. */
function parseBody(text: string, contentType: string | string[] | undefined): unknown {
  if (text === '') return undefined;
  const type = headerValue(contentType);
  const looksJson = /json/i.test(type ?? '') || /^\s*[[{]/.test(text);
  if (!looksJson) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** Keys are written as given (so `map_ids[]` reads as in the service's documentation); values are encoded. */
export function encodeQuery(query: RequestSpec['query']): string {
  if (!query || query.length === 0) return '';
  const encodeKey = (k: string) => encodeURIComponent(k).replace(/%5B/gi, '[').replace(/%5D/gi, ']');
  return '?' + query.map(([k, v]) => `${encodeKey(k)}=${encodeURIComponent(String(v))}`).join('&');
}
