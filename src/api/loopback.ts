import { isIP } from 'node:net';

const LOOPBACK_NAME = 'localhost';

/** 127.0.0.0/8, ::1 and localhost: traffic that never leaves the machine (the sandbox). */
export function isLoopbackHost(hostname: string): boolean {
  const bracketed = /^\[(.*)\]$/.exec(hostname);
  const host = (bracketed ? bracketed[1]! : hostname).toLowerCase();
  // Brackets hold an IPv6 address and nothing else (a URL's host syntax).
  if (isIP(host) === 6) return host === '::1' || host === '0:0:0:0:0:0:0:1' || /^::ffff:127\./.test(host);
  if (bracketed) return false;
  if (host === LOOPBACK_NAME || host.endsWith(`.${LOOPBACK_NAME}`)) return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return false;
}
