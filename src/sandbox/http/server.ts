import Fastify from 'fastify';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context.js';
import { bearerAuth } from './bearer-auth.js';
import { DEFAULT_LIMITS, limitConnections, type ServerLimits } from './connections.js';
import { Messages } from './errors.js';
import { FAULT_HEADER, FaultHeaderError } from './faults.js';

export type RouteModule = (app: FastifyInstance, ctx: SandboxContext) => void;

export interface RouteModules {
  /** Routes outside /api/v1 (token endpoint, legacy post, admin), each guarding itself. */
  open: RouteModule[];
  /** Routes under /api/v1, behind the bearer token check. */
  protected: RouteModule[];
}

const LEGACY_PREFIX = '/api/legacy';
/** The longest path parameter routed (in UTF-16 code units, after decoding); stores refuse longer ids. */
export const MAX_PATH_ID_LENGTH = 2048;
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Connections to destroy after their request was handled (fault injection). */
const toReset = new WeakSet<FastifyRequest>();

export function buildServer(
  ctx: SandboxContext,
  routes: RouteModules,
  limits: ServerLimits = DEFAULT_LIMITS,
): FastifyInstance {
  // Path parameters as long as the store accepts ids (a customer id stored by a batch must be reachable by its own URL).
  // Every wait is bounded: headers, the whole request, an idle connection, an idle keep-alive.
  const app = Fastify({
    logger: false,
    bodyLimit: ctx.maxBodyBytes,
    return503OnClosing: true,
    forceCloseConnections: true,
    routerOptions: { maxParamLength: MAX_PATH_ID_LENGTH },
    http: { headersTimeout: limits.headersTimeoutMs, connectionsCheckingInterval: limits.checkIntervalMs },
    requestTimeout: limits.requestTimeoutMs,
    connectionTimeout: limits.idleTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
  });
  limitConnections(app.server, limits);
  // The interface speaks JSON (and forms at the token endpoint): anything else is 415, not a validation error.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (request, reply) => {
    const path = request.url;
    const isApi = path.startsWith('/api/');
    if (!isApi && !path.startsWith('/oauth/')) return;
    let decision;
    try {
      decision = ctx.faults.decide(request.headers[FAULT_HEADER], isApi);
    } catch (err) {
      if (err instanceof FaultHeaderError) return reply.code(400).send({ message: err.message });
      throw err;
    }
    ctx.requests.recordFaults(decision.applied);
    if (decision.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, decision.latencyMs));
    if (decision.rateLimit) {
      reply
        .header('X-RateLimit-Limit', decision.rateLimit.limit)
        .header('X-RateLimit-Remaining', decision.rateLimit.remaining);
      if (decision.rateLimit.retryAfter !== undefined) reply.header('Retry-After', decision.rateLimit.retryAfter);
    }
    if (decision.status !== undefined) {
      const message =
        decision.status === 429
          ? Messages.tooManyAttempts
          : decision.status === 500
            ? Messages.serverError
            : Messages.unavailable;
      if (decision.status === 503) reply.header('Retry-After', 1);
      return reply.code(decision.status).send({ message });
    }
    if (decision.reset) toReset.add(request);
  });

  app.addHook('onSend', async (request, _reply, payload) => {
    if (toReset.has(request)) request.raw.socket?.destroy();
    return payload;
  });

  const bytesAtStart = new WeakMap<FastifyRequest, number>();
  app.addHook('onRequest', async (request) => {
    // The headers are read by now; what the socket reads from here to the answer is the body.
    if (request.raw.socket) bytesAtStart.set(request, request.raw.socket.bytesRead);
  });

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? 'unmatched';
    // Bodies come chunked as often as with a Content-Length: count what the socket read instead.
    const start = bytesAtStart.get(request);
    const read = request.raw.socket?.bytesRead;
    ctx.requests.recordResponse(
      `${request.method} ${route}`,
      reply.statusCode,
      start !== undefined && read !== undefined ? Math.max(0, read - start) : 0,
    );
  });

  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    const status =
      error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    let message: string;
    switch (error.code) {
      case 'FST_ERR_CTP_BODY_TOO_LARGE':
        message = `The request body is larger than the ${formatBytes(ctx.maxBodyBytes)} limit.`;
        break;
      case 'FST_ERR_CTP_INVALID_JSON_BODY':
        message = 'The request body is not valid JSON.';
        break;
      case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        message = 'The request body is empty; send a JSON document.';
        break;
      case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
        message = `Unsupported Content-Type "${request.headers['content-type'] ?? ''}"; send application/json.`;
        break;
      default:
        message = status === 500 ? Messages.serverError : error.message;
    }
    if (status === 500)
      ctx.onError(`sandbox: ${request.method} ${request.url} failed: ${error.stack ?? error.message}`);
    if (request.url.startsWith(LEGACY_PREFIX))
      return reply.code(status).send({ status: 'ERROR', result: null, redirect_url: null, errors: [message] });
    return reply.code(status).send({ message });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0]!;
    const allowed = METHODS.filter(
      (method) => method !== request.method && app.findRoute({ method, url: path }) !== null,
    );
    if (allowed.length > 0) {
      return reply
        .code(405)
        .header('Allow', allowed.join(', '))
        .send({
          message: `The ${request.method} method is not supported for route ${path.replace(/^\//, '')}. Supported methods: ${allowed.join(', ')}.`,
        });
    }
    return reply.code(404).send({ message: Messages.notFound });
  });

  for (const register of routes.open) register(app, ctx);
  app.register(
    async (api) => {
      api.addHook('onRequest', bearerAuth(ctx.tokens));
      for (const register of routes.protected) register(api, ctx);
    },
    { prefix: '/api/v1' },
  );
  return app;
}

function formatBytes(n: number): string {
  return n % (1024 * 1024) === 0 ? `${n / 1024 / 1024} MB` : n % 1024 === 0 ? `${n / 1024} KB` : `${n} bytes`;
}
