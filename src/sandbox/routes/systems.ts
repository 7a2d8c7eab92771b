import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.js';
import { ACCOUNT_ID } from '../store/seed.js';

export function registerSystemsRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const all = ctx.db.prepare('SELECT id, name FROM management_systems WHERE account_id = ? ORDER BY id');
  app.get('/resources/management-systems', async () => ({ data: all.all(ACCOUNT_ID) }));
}
