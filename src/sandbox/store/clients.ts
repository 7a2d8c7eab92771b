import type { Db } from './database.js';

export interface OAuthClient {
  client_id: string;
  account_id: number;
  client_secret: string;
  secret_version: number;
  scopes: string[];
}

export class ClientStore {
  private readonly byId;
  private readonly insertToken;
  private readonly updateSecret;

  constructor(db: Db) {
    this.byId = db.prepare(
      'SELECT client_id, account_id, client_secret, secret_version, scopes FROM oauth_clients WHERE client_id = ?',
    );
    this.insertToken = db.prepare('INSERT INTO tokens (jti, client_id, issued_at, expires_at) VALUES (?, ?, ?, ?)');
    this.updateSecret = db.prepare(
      'UPDATE oauth_clients SET client_secret = ?, secret_version = secret_version + 1 WHERE client_id = ?',
    );
  }

  find(clientId: string): OAuthClient | undefined {
    const row = this.byId.get(clientId) as (Omit<OAuthClient, 'scopes'> & { scopes: string }) | undefined;
    return row && { ...row, scopes: JSON.parse(row.scopes) as string[] };
  }

  recordToken(jti: string, clientId: string, issuedAt: string, expiresAt: string): void {
    this.insertToken.run(jti, clientId, issuedAt, expiresAt);
  }

  /** Sets a new secret; the version bump makes every token issued before it invalid. */
  rotateSecret(clientId: string, secret: string): void {
    this.updateSecret.run(secret, clientId);
  }
}
