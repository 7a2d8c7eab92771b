import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context.js';
import { basicCredentials } from './basic-auth.js';
import { Messages } from './errors.js';

/** The content types a web page can send cross-site without asking (a plain HTML form, or fetch without preflight). */
const SIMPLE_FORM_TYPES = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * onRequest hook of the /_sandbox admin endpoints, which can rotate the secret and move the
 * clock. A browser attaches cached credentials to a request a foreign page makes it send, so the
 * request must first show it was not sent by a page: no Sec-Fetch-Site of another site, no
 * Origin but the sandbox's own, and no content type a plain form can send. Then it must carry
 * credentials: the admin token printed at start or a bearer token the sandbox issued (both
 * `Authorization: Bearer`), or the client id and secret (`Authorization: Basic`).
 */
export function adminGuard(ctx: SandboxContext) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const site = request.headers['sec-fetch-site'];
    const origin = request.headers.origin;
    if (site === 'cross-site' || site === 'same-site' || (origin !== undefined && !ctx.ownOrigins.has(origin))) {
      return reply.code(403).send({
        message: `The sandbox's admin endpoints refuse requests sent by another site (Origin ${origin ?? 'absent'}, Sec-Fetch-Site ${site ?? 'absent'}).`,
      });
    }
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      const type = request.headers['content-type']?.split(';')[0]?.trim().toLowerCase();
      if (type !== undefined && SIMPLE_FORM_TYPES.has(type)) {
        return reply.code(415).send({ message: `The sandbox's admin endpoints take application/json, not ${type}.` });
      }
    }
    if (!(await authorised(ctx, request.headers.authorization))) {
      return reply
        .code(401)
        .header('WWW-Authenticate', 'Bearer realm="sandbox admin"')
        .send({ message: Messages.unauthenticated });
    }
  };
}

async function authorised(ctx: SandboxContext, header: string | undefined): Promise<boolean> {
  if (header === undefined) return false;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer) return sameSecret(bearer[1]!, ctx.adminToken) || (await ctx.tokens.verify(bearer[1]!)) !== undefined;
  const basic = basicCredentials(header);
  return typeof basic === 'object' && ctx.tokens.authenticate(basic.clientId, basic.clientSecret) !== undefined;
}
