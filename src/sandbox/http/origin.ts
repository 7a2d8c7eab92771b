import type { FastifyRequest } from 'fastify';

/** `http://host:port` as the caller addressed the sandbox, for the absolute URLs of page links. */
export function requestOrigin(request: FastifyRequest): string {
  return `${request.protocol}://${request.host}`;
}

/** The absolute URL of the request without its query string. */
export function requestPath(request: FastifyRequest): string {
  return requestOrigin(request) + request.url.split('?')[0];
}
