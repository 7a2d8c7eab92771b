import { X509Certificate } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type Socket } from 'node:net';
import * as tls from 'node:tls';
import { decodedUserinfo, type ProxyInUse } from '../../api/dispatcher.js';
import { ExitCode } from '../../errors.js';
import { type CheckResult, duration, errorCode, fail, ok, skip, warn } from './check.js';
import { type Route, showProxy } from './network.js';

// The TLS check of `leadctl doctor`: the handshake with the base URL's host (through the proxy in
// use), its certificate chain and expiry. The other network checks are in network.ts.
/** A CONNECT tunnel through the proxy to host:port, as undici's ProxyAgent opens one. */
function tunnel(proxy: ProxyInUse, host: string, port: number, timeoutMs: number): Promise<Socket> {
  const url = new URL(proxy.url);
  const auth =
    url.username || url.password
      ? {
          'proxy-authorization': `Basic ${Buffer.from(`${decodedUserinfo(url.username)}:${decodedUserinfo(url.password)}`).toString('base64')}`,
        }
      : {};
  const target = `${isIP(host) === 6 ? `[${host}]` : host}:${port}`;
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? httpsRequest : httpRequest)({
      host: proxy.host,
      port: proxy.port,
      method: 'CONNECT',
      path: target,
      headers: { host: target, ...auth },
      agent: false,
      timeout: timeoutMs,
    });
    req.once('connect', (res, socket) => {
      if (res.statusCode === 200) resolve(socket);
      else {
        socket.destroy();
        reject(
          Object.assign(new Error(`the proxy refused the tunnel to ${target} (HTTP ${res.statusCode})`), {
            code: `PROXY_${res.statusCode}`,
          }),
        );
      }
    });
    req.once('timeout', () => req.destroy(Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })));
    req.once('error', reject);
    req.end();
  });
}

interface Handshake {
  cert: tls.PeerCertificate | tls.DetailedPeerCertificate;
  authorized: boolean;
  error?: string;
  protocol: string | null;
}

function handshake(host: string, port: number, socket: Socket | undefined, timeoutMs: number): Promise<Handshake> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({
      host,
      port,
      socket,
      // An address is no server name (RFC 6066); the identity check then uses `host`.
      servername: isIP(host) ? undefined : host,
      // The certificate is read whatever it is; whether it is trusted comes from `authorized`.
      rejectUnauthorized: false,
      timeout: timeoutMs,
    });
    s.once('secureConnect', () => {
      const result = {
        cert: s.getPeerCertificate(true),
        authorized: s.authorized,
        error: s.authorizationError ? String(s.authorizationError) : undefined,
        protocol: s.getProtocol(),
      };
      s.destroy();
      resolve(result);
    });
    s.once('timeout', () => s.destroy(Object.assign(new Error('no answer in time'), { code: 'ETIMEDOUT' })));
    s.once('error', reject);
  });
}

/** Would the system's own CA store (not Node's bundled one) trust this chain? Node 22.15+ can tell. */
function systemTrusts(cert: tls.DetailedPeerCertificate): boolean {
  const get = (tls as { getCACertificates?: (type: string) => string[] }).getCACertificates;
  if (!get) return false;
  let top = cert;
  for (let i = 0; i < 10 && top.issuerCertificate && top.issuerCertificate !== top; i++) top = top.issuerCertificate;
  try {
    const leaf = new X509Certificate(top.raw);
    return get('system').some((pem) => {
      const ca = new X509Certificate(pem);
      return leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
    });
  } catch {
    return false;
  }
}

const TRUST_CODES = new Set([
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
]);

/** Certificates this close to their end are a warning: someone has to renew them. */
export const CERT_WARN_DAYS = 14;
const DAY = 86_400_000;

export interface TlsVerdict {
  check: CheckResult;
  failed: boolean;
}

/**
 * Connects with node:tls to the base URL's host (through the proxy's tunnel when the client would
 * use one), reads the certificate's dates and checks it as the client will: Node's CA store, with
 * NODE_EXTRA_CA_CERTS, and the host name.
 */
export async function checkTls(
  baseUrl: URL,
  route: Route,
  env: Record<string, string | undefined>,
  now: Date,
  timeoutMs: number,
): Promise<TlsVerdict> {
  const host = baseUrl.hostname.replace(/^\[|\]$/g, '');
  const port = Number(baseUrl.port) || 443;
  const extra = env.NODE_EXTRA_CA_CERTS;
  let extraNote = '';
  if (extra) {
    try {
      accessSync(extra, constants.R_OK);
      extraNote = `; trusting also NODE_EXTRA_CA_CERTS=${extra}`;
    } catch (err) {
      extraNote = `; NODE_EXTRA_CA_CERTS=${extra} cannot be read (${errorCode(err)}), so Node ignores it`;
    }
  }
  if (route.proxy && !/^https?:$/.test(new URL(route.proxy.url).protocol))
    return {
      check: skip('tls', `not checked through a SOCKS proxy (${showProxy(route.proxy)}); the requests below are`),
      failed: false,
    };
  let result: Handshake;
  try {
    const socket = route.proxy ? await tunnel(route.proxy, host, port, timeoutMs) : undefined;
    result = await handshake(host, port, socket, timeoutMs);
  } catch (err) {
    const code = errorCode(err);
    return {
      check: fail(
        'tls',
        `no TLS connection to ${baseUrl.host}${route.proxy ? ` through ${showProxy(route.proxy)}` : ''} (${code === (err as Error).message ? code : `${code}: ${(err as Error).message}`})`,
        code.startsWith('PROXY_407')
          ? `the proxy wants credentials: put them in ${route.proxy?.variable} (http://USER:PASSWORD@HOST:PORT)`
          : `check that ${baseUrl.host} serves HTTPS on port ${port}, and the network or firewall between`,
        ExitCode.SERVICE,
      ),
      failed: true,
    };
  }
  const { cert } = result;
  if (!cert?.valid_to)
    return {
      check: fail(
        'tls',
        `${baseUrl.host} sent no certificate`,
        `check that ${baseUrl.host} serves HTTPS`,
        ExitCode.SERVICE,
      ),
      failed: true,
    };
  const notAfter = new Date(cert.valid_to);
  const notBefore = new Date(cert.valid_from);
  const issuer = cert.issuer?.O ?? cert.issuer?.CN ?? 'unknown issuer';
  const daysLeft = Math.floor((notAfter.getTime() - now.getTime()) / DAY);
  const until = notAfter.toISOString().slice(0, 10);
  const about = `issued by ${issuer}${result.protocol ? `, ${result.protocol}` : ''}${extraNote}`;
  if (now < notBefore)
    return {
      check: fail(
        'tls',
        `certificate of ${baseUrl.host} is not valid before ${notBefore.toISOString()} (${about})`,
        'if that date has passed, the local clock is wrong (see the clock check); else the service installed it early',
        ExitCode.SERVICE,
      ),
      failed: true,
    };
  if (now > notAfter)
    return {
      check: fail(
        'tls',
        `certificate of ${baseUrl.host} expired ${duration(now.getTime() - notAfter.getTime())} ago, on ${until} (${about})`,
        `whoever runs ${baseUrl.host} must renew it${route.proxy ? ' (or the proxy, when it re-signs traffic with its own certificate)' : ''}; if the date is wrong here, set the local clock`,
        ExitCode.SERVICE,
      ),
      failed: true,
    };
  if (!result.authorized) {
    const code = result.error ?? 'not trusted';
    let hint: string;
    if (code === 'ERR_TLS_CERT_ALTNAME_INVALID' || /altname|does not match/i.test(code))
      hint = `the certificate is for ${cert.subjectaltname ?? cert.subject?.CN ?? 'another name'}, not ${host}: check the base URL`;
    else if (TRUST_CODES.has(code) && 'raw' in cert && systemTrusts(cert as tls.DetailedPeerCertificate))
      hint =
        "the system's CA store trusts it but Node's does not: run with NODE_OPTIONS=--use-system-ca, or give the CA with NODE_EXTRA_CA_CERTS=FILE";
    else if (TRUST_CODES.has(code))
      hint =
        'if a proxy or a private CA signs this certificate, give its CA certificate (PEM) with NODE_EXTRA_CA_CERTS=FILE';
    else hint = `the certificate is refused (${code}): check the base URL, or ask whoever runs ${baseUrl.host}`;
    return {
      check: fail('tls', `certificate of ${baseUrl.host} is not trusted: ${code} (${about})`, hint, ExitCode.SERVICE),
      failed: true,
    };
  }
  const value = `certificate valid ${daysLeft} more day${daysLeft === 1 ? '' : 's'}, until ${until} (${about})`;
  if (extra && extraNote.includes('cannot be read'))
    return { check: warn('tls', value, 'fix the path in NODE_EXTRA_CA_CERTS, or unset it'), failed: false };
  if (daysLeft < CERT_WARN_DAYS)
    return {
      check: warn('tls', value, `renewal is due: tell whoever runs ${baseUrl.host} before it expires on ${until}`),
      failed: false,
    };
  return { check: ok('tls', value), failed: false };
}
