import { describe, expect, it } from 'vitest';
import {
  API_ERROR_MESSAGES,
  ApiErrorBodySchema,
  ManagementSystemsResponseSchema,
  OAuthErrorSchema,
  TokenRequestSchema,
  TokenResponseSchema,
} from '../../../src/schema/index.js';
import { expectIssue, expectValid, withField } from './helpers.js';

describe('TokenRequestSchema', () => {
  const form = {
    grant_type: 'client_credentials',
    client_id: '9f1c2d3e-0000-4000-8000-000000000001',
    client_secret: 's3cret',
  };

  it('accepts the client credentials form', () => expectValid(TokenRequestSchema, form));

  it('requires every field', () => {
    for (const field of Object.keys(form))
      expectIssue(TokenRequestSchema, withField(form, field, undefined), field, 'required');
  });

  it('refuses another grant type, an empty secret and unknown fields such as scope', () => {
    expectIssue(TokenRequestSchema, { ...form, grant_type: 'password' }, 'grant_type', 'must be client_credentials');
    expectIssue(TokenRequestSchema, { ...form, client_secret: '' }, 'client_secret', 'must not be empty');
    expectIssue(TokenRequestSchema, { ...form, scope: 'dry-run' }, 'scope', 'unknown field');
  });
});

describe('token responses', () => {
  it('parses a token response and tolerates extra fields', () => {
    const parsed = TokenResponseSchema.parse({
      token_type: 'Bearer',
      expires_in: 3600,
      access_token: 'a.b.c',
      extra: 1,
    });
    expect(parsed.expires_in).toBe(3600);
    expectIssue(
      TokenResponseSchema,
      { token_type: 'Bearer', expires_in: 3600.5, access_token: 'x' },
      'expires_in',
      'int',
    );
    expectIssue(TokenResponseSchema, { token_type: 'Bearer', expires_in: 3600 }, 'access_token', 'required');
  });

  it('parses OAuth errors with or without the service extras', () => {
    expectValid(OAuthErrorSchema, { error: 'invalid_client' });
    expectValid(OAuthErrorSchema, { error: 'invalid_scope', error_description: 'd', hint: 'h', message: 'm' });
    expectIssue(OAuthErrorSchema, { message: 'no code' }, 'error', 'required');
  });
});

describe('ManagementSystemsResponseSchema', () => {
  it('parses the list and refuses a malformed entry', () => {
    expectValid(ManagementSystemsResponseSchema, { data: [{ id: 1, name: 'LMS One' }] });
    expectIssue(ManagementSystemsResponseSchema, { data: [{ id: 1 }] }, 'data[0].name', 'required');
    expectIssue(ManagementSystemsResponseSchema, {}, 'data', 'required');
  });
});

describe('ApiErrorBodySchema', () => {
  it('parses plain and validation error bodies', () => {
    expectValid(ApiErrorBodySchema, { message: API_ERROR_MESSAGES[401] });
    const parsed = ApiErrorBodySchema.parse({
      message: API_ERROR_MESSAGES[422],
      errors: { 'customers.0.customer_id': ['required'] },
    });
    expect(parsed.errors?.['customers.0.customer_id']).toEqual(['required']);
  });

  it('refuses errors that are not arrays of strings', () => {
    expectIssue(ApiErrorBodySchema, { message: 'x', errors: { list: 'bad' } }, 'errors.list', 'expected array');
  });

  it('carries the documented messages', () => {
    expect(API_ERROR_MESSAGES[422]).toBe('The given data was invalid.');
    expect(API_ERROR_MESSAGES[403]).toBe('This action is unauthorized.');
  });
});
