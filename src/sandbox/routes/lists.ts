import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ListIdSchema, ListWriteSchema, listWriteErrorBag } from '../../schema/index.js';
import { isoSeconds } from '../clock.js';
import type { SandboxContext } from '../context.js';
import { laravelPage, requestedPage } from '../domain/laravel-page.js';
import { sendNotFound, sendValidationError } from '../http/errors.js';
import { requestPath } from '../http/origin.js';
import { ListStore } from '../store/lists.js';
import { ACCOUNT_ID } from '../store/seed.js';

/** The contract's heading path, and the path its request example uses: the sandbox serves both. */
export const LIST_PREFIXES = ['/lead-management/lists', '/list-manager/lists'] as const;
export const LISTS_PER_PAGE = 250;

interface ListParams {
  listId: string;
}

export function registerListRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const store = new ListStore(ctx.db, ACCOUNT_ID);
  const now = () => isoSeconds(ctx.clock.now());
  const listId = (request: FastifyRequest<{ Params: ListParams }>): number | undefined => {
    const parsed = ListIdSchema.safeParse(request.params.listId);
    return parsed.success ? parsed.data : undefined;
  };

  for (const prefix of ctx.listPrefixes) {
    app.post(prefix, async (request, reply: FastifyReply) => {
      const parsed = ListWriteSchema.safeParse(request.body);
      if (!parsed.success) return sendValidationError(reply, listWriteErrorBag(parsed.error));
      const { name, type, list } = parsed.data;
      return reply.code(201).send({ data: store.create(name, type, list, now()) });
    });

    app.put<{ Params: ListParams }>(`${prefix}/:listId`, async (request, reply) => {
      const id = listId(request);
      if (id === undefined || store.get(id) === undefined) return sendNotFound(reply);
      const parsed = ListWriteSchema.safeParse(request.body);
      if (!parsed.success) return sendValidationError(reply, listWriteErrorBag(parsed.error));
      const { name, type, list } = parsed.data;
      const updated = store.replace(id, name, type, list, now());
      return updated === undefined ? sendNotFound(reply) : { data: updated };
    });

    app.get<{ Params: ListParams }>(`${prefix}/:listId`, async (request, reply) => {
      const id = listId(request);
      const list = id === undefined ? undefined : store.get(id);
      return list === undefined ? sendNotFound(reply) : { data: list };
    });

    app.get<{ Querystring: Record<string, unknown> }>(prefix, async (request) => {
      const page = requestedPage(request.query.page);
      const { total, rows } = store.page((page - 1) * LISTS_PER_PAGE, LISTS_PER_PAGE);
      return laravelPage(requestPath(ctx.publicOrigin, request), page, LISTS_PER_PAGE, total, rows);
    });
  }
}
