import { randomUUID, timingSafeEqual } from 'node:crypto';
import { jwtVerify, SignJWT } from 'jose';
import type { Clock } from '../clock.js';
import { isoSeconds } from '../clock.js';
import type { ClientStore, OAuthClient } from '../store/clients.js';

const ISSUER = 'leadctl-sandbox';

export interface IssuedToken {
  token_type: 'Bearer';
  expires_in: number;
  access_token: string;
}

/** Issues and checks HS256 access tokens for the client credentials grant. */
export class TokenService {
  constructor(
    private readonly clients: ClientStore,
    private readonly key: Uint8Array,
    private readonly ttlSeconds: number,
    private readonly clock: Clock,
  ) {}

  /** The client if id and secret match, else undefined. */
  authenticate(clientId: string, clientSecret: string): OAuthClient | undefined {
    const client = this.clients.find(clientId);
    if (!client) return undefined;
    const given = Buffer.from(clientSecret);
    const expected = Buffer.from(client.client_secret);
    return given.length === expected.length && timingSafeEqual(given, expected) ? client : undefined;
  }

  async issue(client: OAuthClient): Promise<IssuedToken> {
    const now = this.clock.now();
    const iat = Math.floor(now.getTime() / 1000);
    const exp = iat + this.ttlSeconds;
    const jti = randomUUID();
    const access_token = await new SignJWT({ sv: client.secret_version, scopes: client.scopes })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(client.client_id)
      .setSubject(client.client_id)
      .setJti(jti)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    this.clients.recordToken(jti, client.client_id, isoSeconds(new Date(iat * 1000)), isoSeconds(new Date(exp * 1000)));
    return { token_type: 'Bearer', expires_in: this.ttlSeconds, access_token };
  }

  /** The client a bearer token belongs to, or undefined when it is malformed, badly signed, expired or revoked by a rotation. */
  async verify(token: string): Promise<OAuthClient | undefined> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        currentDate: this.clock.now(),
      });
      if (typeof payload.sub !== 'string') return undefined;
      const client = this.clients.find(payload.sub);
      return client && payload.sv === client.secret_version ? client : undefined;
    } catch {
      return undefined;
    }
  }
}
