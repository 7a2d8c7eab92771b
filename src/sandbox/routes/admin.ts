import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.js';
import { isoSeconds } from '../clock.js';
import { adminGuard } from '../http/admin-guard.js';
import { randomAlphanumeric } from '../random.js';
import { storeCounts } from '../store/counts.js';
import { ListStore } from '../store/lists.js';
import { ACCOUNT_ID } from '../store/seed.js';

export const ADMIN_PREFIX = '/_sandbox';

/**
 * Sandbox-only endpoints: what arrived, secret rotation, the clock. Behind adminGuard: the admin
 * token, a bearer token or the client credentials, and never for a request a web page sent.
 */
export function registerAdminRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.register(async (admin) => {
    admin.addHook('onRequest', adminGuard(ctx));
    adminRoutes(admin, ctx);
  });
}

function adminRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.get(`${ADMIN_PREFIX}/stats`, async () => ({
    ...storeCounts(ctx.db),
    requests: {
      total: ctx.requests.total,
      body_bytes: ctx.requests.bodyBytes,
      by_route: ctx.requests.byRoute,
      by_status: ctx.requests.byStatus,
    },
    faults: ctx.requests.faults,
    random_seed: ctx.faults.settings.randomSeed,
    now: isoSeconds(ctx.clock.now()),
  }));

  app.post(`${ADMIN_PREFIX}/rotate-secret`, async (request, reply) => {
    const body = (request.body ?? {}) as { client_secret?: unknown };
    const secret = body.client_secret === undefined ? randomAlphanumeric(40) : body.client_secret;
    if (typeof secret !== 'string' || !/^[\x21-\x7e]{8,255}$/.test(secret)) {
      return reply.code(422).send({
        message: 'The given data was invalid.',
        errors: { client_secret: ['client_secret must be 8..255 printable characters without spaces'] },
      });
    }
    ctx.clients.rotateSecret(ctx.account.clientId, secret);
    ctx.account.clientSecret = secret;
    return { client_id: ctx.account.clientId, client_secret: secret };
  });

  // The contract has no way to archive a list; this lets a rehearsal show one (deleted_at set).
  const lists = new ListStore(ctx.db, ACCOUNT_ID);
  app.post<{ Params: { listId: string } }>(`${ADMIN_PREFIX}/lists/:listId/archive`, async (request, reply) => {
    const id = /^\d{1,15}$/.test(request.params.listId) ? Number(request.params.listId) : undefined;
    const list = id === undefined ? undefined : lists.archive(id, isoSeconds(ctx.clock.now()));
    return list ? { data: list } : reply.code(404).send({ message: 'Not Found' });
  });

  app.post(`${ADMIN_PREFIX}/clock`, async (request, reply) => {
    const body = (request.body ?? {}) as { advance_seconds?: unknown };
    const seconds = body.advance_seconds;
    if (typeof seconds !== 'number' || !Number.isFinite(seconds) || seconds < 0) {
      return reply.code(422).send({
        message: 'The given data was invalid.',
        errors: { advance_seconds: ['advance_seconds must be a number of seconds, 0 or more'] },
      });
    }
    try {
      ctx.clock.advance(seconds);
    } catch (err) {
      return reply
        .code(422)
        .send({ message: 'The given data was invalid.', errors: { advance_seconds: [(err as Error).message] } });
    }
    return { now: isoSeconds(ctx.clock.now()) };
  });
}
