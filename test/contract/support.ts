import type { TestSandbox } from '../helpers/sandbox.js';

export interface HttpResult<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

/** One request to the sandbox; the body is sent as JSON unless it is already a string. */
export async function http<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string> } = {},
): Promise<HttpResult<T>> {
  const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
  if (options.token) headers.Authorization = `Bearer ${options.token}`;
  let body: string | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' ? options.body : JSON.stringify(options.body);
    headers['Content-Type'] ??= 'application/json';
  }
  const res = await fetch(baseUrl + path, { method, headers, body });
  const text = await res.text();
  let parsed: any = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // Not JSON: the test sees the text.
  }
  return { status: res.status, headers: res.headers, body: parsed as T, text };
}

export async function getToken(sb: Pick<TestSandbox, 'baseUrl' | 'clientId' | 'clientSecret'>): Promise<string> {
  const res = await fetch(`${sb.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: sb.clientId,
      client_secret: sb.clientSecret,
    }).toString(),
  });
  if (res.status !== 200) throw new Error(`token request answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** A client bound to one sandbox and one token. */
export function apiClient(baseUrl: string, token: string) {
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => http<T>(baseUrl, 'GET', path, { token, headers }),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
      http<T>(baseUrl, 'POST', path, { token, body, headers }),
    put: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) =>
      http<T>(baseUrl, 'PUT', path, { token, body, headers }),
  };
}

/** A lead post body that passes every rule; override fields per test. */
export function validLead(apiKey: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    api_key: apiKey,
    ip_address: '203.0.113.7',
    source_url: 'https://example.com/apply',
    affiliate_id: 'AFF-100',
    user_agent: 'Mozilla/5.0 (contract test)',
    loan_request_amount: 500,
    social_security_number: '123456789',
    first_name: 'Ann',
    last_name: 'Lee',
    date_of_birth: '1990-01-02',
    drivers_license_state: 'TX',
    drivers_license_number: 'D1234567',
    is_military: 0,
    email: 'ann.lee@example.com',
    address: '1 Main St',
    city: 'Austin',
    state: 'TX',
    zip: '78701',
    home_phone: '5125550100',
    rent_or_own: 1,
    income_sources: [
      {
        is_primary: 1,
        income_source: 1,
        monthly_income: 3000,
        pay_frequency: 2,
        next_pay_date: '2024-02-01',
        payment_type: 3,
        employer_name: 'Acme Widgets',
        work_phone: '5125550199',
        months_at_job: 12,
      },
    ],
    bank_accounts: [
      {
        is_primary: 1,
        bank_routing_number: '011000015',
        bank_account_number: '123456789012',
        bank_account_type: 1,
        months_at_bank: 24,
      },
    ],
    ...overrides,
  };
}
