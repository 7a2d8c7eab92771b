export interface BasicCredentials {
  clientId: string;
  clientSecret: string;
}

/**
 * The client id and secret of an `Authorization: Basic` header; 'malformed' for a Basic header
 * that does not decode, undefined for none. RFC 6749 §2.3.1: id and secret are form-urlencoded
 * before being joined by a colon and base64-encoded.
 */
export function basicCredentials(header: string | undefined): BasicCredentials | 'malformed' | undefined {
  if (header === undefined) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header);
  if (!m) return /^Basic\b/i.test(header) ? 'malformed' : undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return 'malformed';
  try {
    const formDecode = (s: string) => decodeURIComponent(s.replace(/\+/g, ' '));
    return { clientId: formDecode(decoded.slice(0, colon)), clientSecret: formDecode(decoded.slice(colon + 1)) };
  } catch {
    return 'malformed';
  }
}
