import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { TokenRequestSchema } from '../../schema/index.js';
import type { SandboxContext } from '../context.js';
import { basicCredentials } from '../http/basic-auth.js';

type OAuthError = 'invalid_request' | 'invalid_client' | 'unsupported_grant_type' | 'invalid_scope';

const DESCRIPTIONS: Record<OAuthError, string> = {
  invalid_request:
    'The request is missing a required parameter, includes an invalid parameter value, includes a parameter more than once, or is otherwise malformed.',
  invalid_client: 'Client authentication failed',
  unsupported_grant_type: 'The authorization grant type is not supported by the authorization server.',
  invalid_scope: 'The requested scope is invalid, unknown, or malformed',
};

/** RFC 6749 §5.2 error, with the `hint` and `message` fields the service adds. */
function oauthError(reply: FastifyReply, status: 400 | 401, error: OAuthError, hint: string): FastifyReply {
  return reply
    .code(status)
    .header('Cache-Control', 'no-store')
    .send({ error, error_description: DESCRIPTIONS[error], hint, message: DESCRIPTIONS[error] });
}

/** The token endpoint is form-encoded; duplicates are kept as arrays so the endpoint can refuse them. */
function parseForm(_request: FastifyRequest, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of new URLSearchParams(body as string)) {
    const prev = out[k];
    out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
  }
  done(null, out);
}

export function registerOAuthRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  // Forms are the token endpoint's alone (the interface speaks JSON everywhere else): a web page
  // can post a form anywhere, so no other route may take one.
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, parseForm);
    scope.post('/oauth/token', (request, reply) => token(ctx, request, reply));
  });
}

async function token(ctx: SandboxContext, request: FastifyRequest, reply: FastifyReply) {
  const body = (request.body !== null && typeof request.body === 'object' ? request.body : {}) as Record<
    string,
    unknown
  >;
  const field = (name: string): string | undefined | 'repeated' => {
    const v = body[name];
    if (Array.isArray(v)) return 'repeated';
    if (v === undefined || v === null || v === '') return undefined;
    return String(v);
  };
  for (const name of ['grant_type', 'client_id', 'client_secret', 'scope']) {
    if (field(name) === 'repeated') return oauthError(reply, 400, 'invalid_request', `Check the \`${name}\` parameter`);
  }
  const basic = basicCredentials(request.headers.authorization);
  if (basic === 'malformed') return oauthError(reply, 400, 'invalid_request', 'Check the `Authorization` header');
  const bodyId = field('client_id');
  const bodySecret = field('client_secret');
  if (basic && bodySecret !== undefined)
    return oauthError(reply, 400, 'invalid_request', 'Use one client authentication method, not both');
  if (basic && bodyId !== undefined && bodyId !== basic.clientId)
    return oauthError(reply, 400, 'invalid_request', 'Check the `client_id` parameter');

  // RFC 6749 §3.2: unrecognised parameters are ignored, so only the grant's own fields are validated.
  const parsed = TokenRequestSchema.safeParse({
    grant_type: field('grant_type'),
    client_id: basic?.clientId ?? bodyId,
    client_secret: basic?.clientSecret ?? bodySecret,
  });
  if (!parsed.success) {
    const [first] = parsed.error.issues;
    const name = String(first!.path[0]);
    if (name === 'grant_type' && field('grant_type') !== undefined) {
      return oauthError(reply, 400, 'unsupported_grant_type', 'Check that all required parameters have been provided');
    }
    return oauthError(reply, 400, 'invalid_request', `Check the \`${name}\` parameter`);
  }
  const { client_id: clientId, client_secret: clientSecret } = parsed.data;

  const client = ctx.tokens.authenticate(clientId, clientSecret);
  if (!client) {
    if (basic) reply.header('WWW-Authenticate', 'Basic realm="OAuth"');
    return oauthError(reply, 401, 'invalid_client', '');
  }
  const scope = field('scope');
  if (scope !== undefined) return oauthError(reply, 400, 'invalid_scope', `Check the \`${scope}\` scope`);

  const token = await ctx.tokens.issue(client);
  return reply.header('Cache-Control', 'no-store').header('Pragma', 'no-cache').send(token);
}
