import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A server on 127.0.0.1 (ephemeral port) that answers as hostile ground does: a captive portal's
 * page with HTTP 200, an empty or cut-off body, JSON of another shape, a body that trickles or
 * never ends, headers that never come. One mode per fault, switchable while it runs
 * (`server.mode = 'pass-through'`), so that a second run of the same command, at the same base
 * URL (the same journal and delta record), meets a healthy service.
 *
 * The token route (`POST /oauth/token`) is answered as a normal service would, so the client gets
 * its token and reaches the request under test: forwarded to `upstream` when there is one (a
 * sandbox: its tokens are then good there too), else by a local stand-in accepting
 * HOSTILE_CLIENT_ID / HOSTILE_CLIENT_SECRET. `faultToken: true` applies the mode to it as well.
 *
 * Adding a mode: add an entry to MODES (a function of the request and its response).
 */

export interface HostileRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The request body, read whole before the mode answers. */
  body: Buffer;
  /** The mode that answered (or `token`, `pass-through`). */
  answeredBy: string;
}

export interface ModeContext {
  req: HostileRequest;
  res: ServerResponse;
  options: Required<Pick<HostileServerOptions, 'trickleIntervalMs' | 'hugeBytes'>> & HostileServerOptions;
  /** Runs when the client goes away (or the server closes): stop timers and streams here. */
  onClose(cleanup: () => void): void;
}

export type Mode = (ctx: ModeContext) => void;

/** A captive portal's sign-in page, as a hotel or train network sends it in place of any answer. */
export const PORTAL_PAGE =
  '<!DOCTYPE html>\r\n<html><head><title>Guest Wi-Fi: sign in</title></head>\r\n' +
  '<body><form action="/login" method="post"><p>Accept the terms to continue.</p>' +
  '<button>Connect</button></form></body></html>\r\n';

/** Clears the screen, paints red, rewrites the line and sets the window's title on a terminal that prints it. */
export const TERMINAL_ESCAPES = '\u001b[2J\u001b[31mCLEARED\u001b[0m\rOVERWRITE\u001b]0;title\u0007';

const json = (res: ServerResponse, status: number, text: string, type = 'application/json') =>
  res.writeHead(status, { 'content-type': type, 'content-length': String(Buffer.byteLength(text)) }).end(text);

export const MODES = {
  /** A captive portal or a WAF block page: HTML with a success status. */
  'html-200': ({ res }) => json(res, 200, PORTAL_PAGE, 'text/html; charset=utf-8'),
  /** A proxy that swallowed the answer: 200, no body, no content type. */
  'empty-200': ({ res }) => res.writeHead(200, { 'content-length': '0' }).end(),
  /** JSON cut short by something in between, with a length that matches the cut (a complete HTTP message). */
  'truncated-json-200': ({ res }) => json(res, 200, '{"data":{"accepted":{"customers":10,"loans":'),
  /** JSON, but not an answer of the service (a misrouted API): an array. */
  'wrong-shape-200': ({ res }) => json(res, 200, '["ok"]'),
  /** A body that would parse as an answer, sent as text/plain: the content type alone makes it none. */
  'text-plain-200': ({ res }) => json(res, 200, '{"data":{}}', 'text/plain'),
  /** Headers at once, then one byte of a JSON body every `trickleIntervalMs` (2 s), never ending. */
  trickle: ({ res, options, onClose }) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write('{');
    const timer = setInterval(() => res.write(' '), options.trickleIntervalMs);
    onClose(() => clearInterval(timer));
  },
  /**
   * `hugeBytes` (2 GiB) of a JSON array, generated as it is sent from one small buffer (never held
   * in memory), with a Content-Length when `hugeDeclared` is true, else chunked.
   */
  huge: ({ res, options, onClose }) => {
    const total = options.hugeBytes;
    res.writeHead(200, {
      'content-type': 'application/json',
      ...(options.hugeDeclared ? { 'content-length': String(total) } : {}),
    });
    const block = Buffer.from('0,'.repeat(32 * 1024));
    let sent = 0;
    let closed = false;
    onClose(() => (closed = true));
    const pump = () => {
      while (!closed && sent < total) {
        const n = Math.min(block.length, total - sent);
        sent += n;
        if (!res.write(n === block.length ? block : block.subarray(0, n))) {
          res.once('drain', pump);
          return;
        }
      }
      if (!closed) res.end();
    };
    pump();
  },
  /** A broken service or proxy whose message would act on a terminal (clear it, rewrite a line, set its title), 100 KB long. */
  'escapes-500': ({ res }) => json(res, 500, JSON.stringify({ message: TERMINAL_ESCAPES + 'x'.repeat(100_000) })),
  /** The same in a 422's field error, as a record's reason. */
  'escapes-422': ({ res }) =>
    json(
      res,
      422,
      JSON.stringify({ message: 'The given data was invalid.', errors: { customer_id: [TERMINAL_ESCAPES] } }),
    ),
  /** Reads the request and never answers: no status line, no headers. */
  'slow-headers': () => undefined,
} satisfies Record<string, Mode>;

export type ModeName = keyof typeof MODES | 'pass-through';

export interface HostileServerOptions {
  /** What non-token requests get first (default `html-200`); switch with `server.mode`. */
  mode?: ModeName;
  /** A healthy service to forward to: the token route always, everything in `pass-through` mode. */
  upstream?: string;
  /** Apply the mode to the token route too. */
  faultToken?: boolean;
  /** Only requests whose path matches are faulted; the others pass through (needs `upstream`). */
  faultPaths?: RegExp;
  trickleIntervalMs?: number;
  hugeBytes?: number;
  hugeDeclared?: boolean;
}

export interface HostileServer {
  baseUrl: string;
  /** The mode for what comes next; settable. */
  mode: ModeName;
  seen: HostileRequest[];
  /** Requests a fault mode answered (not the token route, not forwarded ones). */
  faulted(): HostileRequest[];
  close(): Promise<void>;
}

export const HOSTILE_CLIENT_ID = 'hostile-client';
export const HOSTILE_CLIENT_SECRET = 'Hq3Lm5Np7Rs9Tu1Vw3Xy5Za7Bc9De1Fg3Hi5Jk';

export async function startHostileServer(options: HostileServerOptions = {}): Promise<HostileServer> {
  const settings = { trickleIntervalMs: 2000, hugeBytes: 2 * 1024 ** 3, ...options };
  const seen: HostileRequest[] = [];
  let tokens = 0;
  const state = { mode: options.mode ?? ('html-200' as ModeName) };

  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
      const isToken = path === '/oauth/token' && req.method === 'POST';
      const faulted =
        state.mode !== 'pass-through' &&
        (!isToken || options.faultToken === true) &&
        (options.faultPaths === undefined || options.faultPaths.test(path));
      const answeredBy = faulted ? state.mode : isToken && !options.upstream ? 'token' : 'pass-through';
      const request: HostileRequest = {
        method: req.method ?? 'GET',
        path,
        headers: req.headers,
        body: Buffer.concat(chunks),
        answeredBy,
      };
      seen.push(request);
      if (answeredBy === 'token') return localToken(request, res);
      if (answeredBy === 'pass-through') return forward(req, request, res);
      const cleanups: Array<() => void> = [];
      res.on('close', () => {
        for (const cleanup of cleanups) cleanup();
      });
      MODES[state.mode as keyof typeof MODES]({
        req: request,
        res,
        options: settings,
        onClose: (cleanup) => cleanups.push(cleanup),
      });
    });
  });

  function localToken(request: HostileRequest, res: ServerResponse): void {
    const form = new URLSearchParams(request.body.toString('utf8'));
    if (form.get('client_id') !== HOSTILE_CLIENT_ID || form.get('client_secret') !== HOSTILE_CLIENT_SECRET) {
      json(res, 401, JSON.stringify({ error: 'invalid_client', error_description: 'Client authentication failed' }));
      return;
    }
    tokens++;
    json(res, 200, JSON.stringify({ token_type: 'Bearer', expires_in: 3600, access_token: `hostile-token-${tokens}` }));
  }

  function forward(req: IncomingMessage, request: HostileRequest, res: ServerResponse): void {
    if (!options.upstream) {
      json(res, 502, JSON.stringify({ message: 'pass-through without an upstream' }));
      return;
    }
    const target = new URL(req.url ?? '/', options.upstream);
    const headers = { ...req.headers, host: target.host };
    const out = httpRequest(target, { method: req.method, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    out.end(request.body);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    get mode() {
      return state.mode;
    },
    set mode(mode: ModeName) {
      state.mode = mode;
    },
    seen,
    faulted: () => seen.filter((r) => r.answeredBy !== 'token' && r.answeredBy !== 'pass-through'),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
