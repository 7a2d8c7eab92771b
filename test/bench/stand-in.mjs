/**
 * A service that costs (almost) nothing, for the benchmark's "client alone" rows: a node:http
 * server on 127.0.0.1 that reads each request body to the end and answers the interface's minimal
 * valid answer (a token for the token endpoint, `{}` for a batch). It parses nothing and stores
 * nothing, so a push against it measures the client, not the sandbox. Not a `*.bench.mjs` module:
 * push.bench.mjs and delta.bench.mjs import it.
 */
import { createServer } from 'node:http';

const TOKEN = JSON.stringify({ token_type: 'Bearer', expires_in: 3600, access_token: 'stand-in-token' });
const CLIENT_ID = '00000000-0000-4000-8000-000000000000';
const CLIENT_SECRET = 'stand-in-secret-0123456789abcdefghijklmnop';

/**
 * Starts the stand-in on an ephemeral loopback port. `env` points leadctl at it (with `configDir`
 * as its throwaway config folder); `counts()` is the requests and body bytes it has read;
 * `stop()` closes it.
 */
export async function startStandIn({ configDir } = {}) {
  let requests = 0;
  let bodyBytes = 0;
  const server = createServer((req, res) => {
    req.on('data', (chunk) => {
      bodyBytes += chunk.length;
    });
    req.on('end', () => {
      requests++;
      const path = (req.url ?? '/').split('?')[0];
      const body =
        req.method === 'POST' && path === '/oauth/token'
          ? TOKEN
          : req.method === 'POST' && path.startsWith('/api/v1/loan-performance/batches/')
            ? '{}'
            : undefined;
      if (body === undefined) {
        res.writeHead(404, { 'content-type': 'application/json' }).end('{"message":"Not Found"}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }).end(body);
    });
  });
  // No idle or request deadlines: a client that takes its time between two requests on a loaded
  // machine must not find its kept-alive connection closed (a benchmark, not a hardened server).
  server.keepAliveTimeout = 0;
  server.requestTimeout = 0;
  server.headersTimeout = 0;
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const baseUrl = `http://127.0.0.1:${server.address().port}`;
  return {
    baseUrl,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    env: {
      LEADCTL_BASE_URL: baseUrl,
      LEADCTL_CLIENT_ID: CLIENT_ID,
      LEADCTL_CLIENT_SECRET: CLIENT_SECRET,
      ...(configDir ? { LEADCTL_CONFIG_DIR: configDir } : {}),
    },
    counts: () => ({ requests, bodyBytes }),
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve(undefined));
      }),
  };
}
