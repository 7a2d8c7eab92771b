import type { FastifyRequest } from 'fastify';

/**
 * The absolute URL of the request without its query string, on the sandbox's own origin
 * (--public-url, else the listening address): never from the request's Host header, which a
 * client controls.
 */
export function requestPath(origin: string, request: FastifyRequest): string {
  return origin + request.url.split('?')[0];
}
