/**
 * Small servers on 127.0.0.1 for `leadctl doctor`'s tests: a service that answers only what doctor
 * asks (the token, the lists page) with a Date header as skewed as wanted, over http or https; a
 * CONNECT proxy that sends every tunnel to one local address; and self-signed certificates made
 * with openssl at test time, valid or expired.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { type AddressInfo, connect, createServer as createTcpServer, type Socket } from 'node:net';
import { join } from 'node:path';

export const SERVICE_CLIENT_ID = 'doctor-client';
export const SERVICE_CLIENT_SECRET = 'doctor-secret-Zx8Kq2Lm4Np6Rs8T';
export const SERVICE_TOKEN = 'doctor-token-Qw3Er5Ty7Ui9Op1As3Df5';

export interface TinyService {
  baseUrl: string;
  port: number;
  /** Every request received, as "METHOD /path". */
  requests: string[];
  close(): Promise<void>;
}

export interface TinyServiceOptions {
  /** Serve https with this certificate and key (PEM). */
  tls?: { cert: string; key: string };
  /** The Date header is this far from the real time (negative: the service is behind). */
  dateOffsetMs?: number;
  /** Where lists answer; the other documented prefix is a missing route. */
  listsPrefix?: 'lead-management' | 'list-manager';
  /** Host name in the base URL (the certificate's name); 127.0.0.1 by default. */
  host?: string;
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections?.();
  return new Promise((resolve) => server.close(() => resolve()));
}

export async function startTinyService(options: TinyServiceOptions = {}): Promise<TinyService> {
  const requests: string[] = [];
  const lists = `/api/v1/${options.listsPrefix ?? 'lead-management'}/lists`;
  const handler = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      requests.push(`${req.method} ${url.pathname}`);
      const send = (status: number, body: unknown) => {
        res.writeHead(status, {
          'content-type': 'application/json',
          date: new Date(Date.now() + (options.dateOffsetMs ?? 0)).toUTCString(),
        });
        res.end(JSON.stringify(body));
      };
      if (req.method === 'POST' && url.pathname === '/oauth/token') {
        const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        if (form.get('client_id') !== SERVICE_CLIENT_ID || form.get('client_secret') !== SERVICE_CLIENT_SECRET)
          return send(401, { error: 'invalid_client', message: 'Client authentication failed' });
        return send(200, { token_type: 'Bearer', expires_in: 3600, access_token: SERVICE_TOKEN });
      }
      if (req.method === 'GET' && url.pathname === lists) {
        if (req.headers.authorization !== `Bearer ${SERVICE_TOKEN}`) return send(401, { message: 'Unauthenticated.' });
        const page = `http://127.0.0.1${lists}`;
        return send(200, {
          current_page: 1,
          data: [],
          first_page_url: `${page}?page=1`,
          from: null,
          last_page: 1,
          last_page_url: `${page}?page=1`,
          links: [],
          next_page_url: null,
          path: page,
          per_page: 15,
          prev_page_url: null,
          to: null,
          total: 0,
        });
      }
      return send(404, { message: `The route ${url.pathname.slice(1)} could not be found.` });
    });
  };
  const server = options.tls
    ? createHttpsServer({ cert: options.tls.cert, key: options.tls.key }, handler)
    : createHttpServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `${options.tls ? 'https' : 'http'}://${options.host ?? '127.0.0.1'}:${port}`,
    port,
    requests,
    close: () => closeServer(server),
  };
}

export interface ConnectProxy {
  url: string;
  /** The authorities asked for in CONNECT requests, e.g. "service.doctor.test:443". */
  tunnels: string[];
  close(): Promise<void>;
}

/** An HTTP proxy that opens every CONNECT tunnel to 127.0.0.1:`port`, whatever host was asked for. */
export async function startConnectProxy(port: number): Promise<ConnectProxy> {
  const tunnels: string[] = [];
  const sockets = new Set<Socket>();
  const server = createHttpServer((_req, res) => {
    res.writeHead(405);
    res.end();
  });
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    tunnels.push(req.url ?? '');
    const upstream = connect(port, '127.0.0.1', () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => undefined);
    }
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: own } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${own}`,
    tunnels,
    async close() {
      for (const s of sockets) s.destroy();
      await closeServer(server);
    },
  };
}

/** A TCP port that counts the connections made to it and answers nothing (a proxy that must not be used). */
export async function startCountingPort(): Promise<{ url: string; connections(): number; close(): Promise<void> }> {
  let connections = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((s) => {
    connections++;
    sockets.add(s);
    s.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    connections: () => connections,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A port on 127.0.0.1 that nothing listens on (taken, then given back). */
export async function closedPort(): Promise<number> {
  const server = createTcpServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export interface Certificate {
  cert: string;
  key: string;
  /** The certificate's file (for NODE_EXTRA_CA_CERTS). */
  certFile: string;
}

/**
 * A self-signed certificate for `name` (a host name, or 127.0.0.1), made by openssl in `dir`:
 * valid for 30 days, or expired (valid in January 2020 only). `openssl ca -selfsign` takes exact
 * dates on every OpenSSL from 1.1.1 (`req -not_after` needs 3.4, and `-days` refuses the past).
 */
export function makeCertificate(dir: string, name: string, expired = false): Certificate {
  try {
    execFileSync('openssl', ['version'], { stdio: 'pipe' });
  } catch {
    throw new Error('openssl is needed to make test certificates: apt-get install openssl');
  }
  const tag = `${name.replace(/[^\w.-]/g, '_')}-${expired ? 'expired' : 'valid'}`;
  const key = join(dir, `${tag}.key`);
  const certFile = join(dir, `${tag}.pem`);
  const san = /^\d+\.\d+\.\d+\.\d+$/.test(name) ? `IP:${name}` : `DNS:${name}`;
  const run = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  run(['genrsa', '-out', key, '2048']);
  if (!expired) {
    run([
      'req',
      '-x509',
      '-new',
      '-key',
      key,
      '-out',
      certFile,
      '-subj',
      `/CN=${name}`,
      '-addext',
      `subjectAltName=${san}`,
      '-days',
      '30',
    ]);
  } else {
    const conf = join(dir, `${tag}.cnf`);
    writeFileSync(
      conf,
      [
        '[ ca ]',
        'default_ca = self',
        '[ self ]',
        `database = ${tag}.index`,
        'new_certs_dir = .',
        `serial = ${tag}.serial`,
        'default_md = sha256',
        'policy = any',
        'copy_extensions = copy',
        'unique_subject = no',
        '[ any ]',
        'commonName = supplied',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, `${tag}.index`), '');
    writeFileSync(join(dir, `${tag}.serial`), '01\n');
    const csr = join(dir, `${tag}.csr`);
    run(['req', '-new', '-key', key, '-subj', `/CN=${name}`, '-addext', `subjectAltName=${san}`, '-out', csr]);
    run([
      'ca',
      '-batch',
      '-config',
      conf,
      '-selfsign',
      '-keyfile',
      key,
      '-in',
      csr,
      '-startdate',
      '20200101000000Z',
      '-enddate',
      '20200201000000Z',
      '-out',
      certFile,
    ]);
  }
  // `openssl ca` writes the certificate as text before the PEM: keep the PEM alone.
  const cert = execFileSync('openssl', ['x509', '-in', certFile], { encoding: 'utf8' });
  writeFileSync(certFile, cert);
  return { cert, key: readFileSync(key, 'utf8'), certFile };
}
