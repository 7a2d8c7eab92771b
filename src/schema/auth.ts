import * as z from 'zod';
import { RequiredStringSchema, requiredOr } from './common.js';

export const GRANT_TYPE = 'client_credentials';

/**
 * The form fields of `POST /oauth/token`. A client that authenticates with HTTP Basic
 * sends client_id and client_secret in the header; merge them in before parsing.
 */
export const TokenRequestSchema = z.strictObject({
  grant_type: z.literal(GRANT_TYPE, { error: requiredOr(`must be ${GRANT_TYPE}`) }),
  client_id: RequiredStringSchema,
  client_secret: RequiredStringSchema,
});
export type TokenRequest = z.infer<typeof TokenRequestSchema>;

export const TokenResponseSchema = z.looseObject({
  token_type: z.string(),
  expires_in: z.number().int(),
  access_token: z.string(),
});
export type TokenResponse = z.infer<typeof TokenResponseSchema>;

/** RFC 6749 §5.2 error body; the real service adds `hint` and `message`. */
export const OAuthErrorSchema = z.looseObject({
  error: z.string(),
  error_description: z.string().optional(),
  hint: z.string().optional(),
  message: z.string().optional(),
});
export type OAuthError = z.infer<typeof OAuthErrorSchema>;
