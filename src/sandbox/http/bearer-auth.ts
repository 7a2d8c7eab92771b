import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TokenService } from '../domain/tokens.js';
import { Messages } from './errors.js';

/** onRequest hook of the /api/v1 scope: 401 `Unauthenticated.` unless a valid bearer token is sent. */
export function bearerAuth(tokens: TokenService) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const header = request.headers.authorization;
    const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header);
    const client = match ? await tokens.verify(match[1]!) : undefined;
    if (!client)
      return reply.code(401).header('WWW-Authenticate', 'Bearer').send({ message: Messages.unauthenticated });
  };
}
