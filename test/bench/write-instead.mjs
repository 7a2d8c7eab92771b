#!/usr/bin/env node
/**
 * "What you would write instead": the nightly push as an operator would script it without
 * leadctl, for the benchmark to measure beside `customers batch` in the same run. csv-parse
 * (`columns: true`), luxon for the dates, fetch for the requests; the conversions of
 * fixtures/lms/mapping.json (codes → names, dollars → cents, US dates and Chicago wall-clock
 * times → ISO dates and UTC), 1,000 customers a request, 4 requests in flight. The plain way:
 * every loan is held in memory until the payments file has been read, no schema check, no
 * journal, no retries, no resume (what leadctl adds on top of this).
 *
 *   node write-instead.mjs --loans loans.csv --payments payments.csv --mapping mapping.json
 *
 * Reads LEADCTL_BASE_URL, LEADCTL_CLIENT_ID and LEADCTL_CLIENT_SECRET; prints
 * `{"customers":N,"loans":N,"payments":N,"requests":N}`; exits 1 on any failed request.
 */
import { createReadStream, readFileSync } from 'node:fs';
import { parse } from 'csv-parse';
import { DateTime } from 'luxon';
// The interface's names of each enum (an operator copies them from the API docs).
import {
  APPLICATION_TYPES,
  LOAN_STATUSES,
  LOAN_TYPES,
  PAYMENT_MODES,
  PAYMENT_STATUSES,
  PAYMENT_TYPES,
} from '../../dist/schema/loan-performance.js';

const arg = (name) => {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) throw new Error(`--${name} is required`);
  return process.argv[i + 1];
};
const mapping = JSON.parse(readFileSync(arg('mapping'), 'utf8'));
const zone = mapping.source_time_zone;
const dateFormat = mapping.date_format;
const datetimeFormats = [mapping.datetime_format].flat();

const cents = (text) => {
  let s = text.trim();
  const negative = s.startsWith('(') || s.startsWith('-');
  s = s.replace(/[()$,\-\s]/g, '');
  const value = Math.round(Number.parseFloat(s) * 100);
  if (!Number.isFinite(value)) throw new Error(`not an amount: ${text}`);
  return negative ? -value : value;
};
const date = (text) => DateTime.fromFormat(text, dateFormat).toISODate();
const datetime = (text) => {
  for (const format of datetimeFormats) {
    const d = DateTime.fromFormat(text, format, { zone });
    if (d.isValid) return d.toUTC().toFormat("yyyy-MM-dd'T'HH:mm:ss'Z'");
  }
  throw new Error(`not a date and time: ${text}`);
};
const ENUMS = {
  application_type: APPLICATION_TYPES,
  loan_type: LOAN_TYPES,
  loan_status: LOAN_STATUSES,
  payment_type: PAYMENT_TYPES,
  payment_mode: PAYMENT_MODES,
  payment_status: PAYMENT_STATUSES,
};
const loose = (text) => text.toLowerCase().replace(/[^a-z0-9]/g, '');
/** The mapping's code, else the enum name the cell spells (`CASH` → `Cash`). */
const enumValue = (field, values) => {
  const names = new Map(ENUMS[field].map((name) => [loose(name), name]));
  return (text) => values[text] ?? names.get(loose(text)) ?? text;
};
const yes = (text) => /^(y|yes|true|1|t)$/i.test(text.trim());

/** One converter per target field, from the mapping: column → value (empty cells are left out). */
function converters(section) {
  const out = [];
  for (const [field, spec] of Object.entries(section)) {
    if (typeof spec === 'object' && 'const' in spec) {
      out.push([field, null, () => spec.const]);
      continue;
    }
    const column = typeof spec === 'string' ? spec : spec.column;
    let convert;
    if (typeof spec === 'object' && spec.values) convert = enumValue(field, spec.values);
    else if (field.endsWith('_at')) convert = datetime;
    else if (field.endsWith('_date')) convert = date;
    else if (/amount|principal|interest|fees/.test(field)) convert = cents;
    else if (field.startsWith('is_')) convert = yes;
    else if (field.endsWith('_id') && field !== 'loan_id' && field !== 'payment_id') convert = (t) => Number(t);
    else convert = (t) => t;
    out.push([field, column, convert]);
  }
  return out;
}
const loanFields = converters(mapping.loan);
const paymentFields = converters(mapping.payment);
const customerColumn = mapping.customer.customer_id;
const loanColumn = mapping.loan.loan_id;

const record = (fields, row) => {
  const out = {};
  for (const [field, column, convert] of fields) {
    if (column === null) out[field] = convert();
    else if (row[column] !== undefined && row[column] !== '') out[field] = convert(row[column]);
  }
  return out;
};

const customers = new Map();
const loansByKey = new Map();
let loanCount = 0;
let paymentCount = 0;
for await (const row of createReadStream(arg('loans')).pipe(parse({ columns: true }))) {
  const id = row[customerColumn];
  let customer = customers.get(id);
  if (!customer) customers.set(id, (customer = { customer_id: id, loans: [] }));
  const loan = { ...record(loanFields, row), payments: [] };
  customer.loans.push(loan);
  loansByKey.set(`${id}\u0000${row[loanColumn]}`, loan);
  loanCount++;
}
for await (const row of createReadStream(arg('payments')).pipe(parse({ columns: true }))) {
  const loan = loansByKey.get(`${row[customerColumn]}\u0000${row[loanColumn]}`);
  if (!loan) throw new Error(`payment ${row[mapping.payment.payment_id]} of an unknown loan`);
  loan.payments.push(record(paymentFields, row));
  paymentCount++;
}

const base = process.env.LEADCTL_BASE_URL;
const tokenAnswer = await fetch(`${base}/oauth/token`, {
  method: 'POST',
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: process.env.LEADCTL_CLIENT_ID ?? '',
    client_secret: process.env.LEADCTL_CLIENT_SECRET ?? '',
  }),
});
if (!tokenAnswer.ok) throw new Error(`token endpoint answered ${tokenAnswer.status}`);
const { access_token: token } = await tokenAnswer.json();

const all = [...customers.values()];
let next = 0;
let requests = 0;
const worker = async () => {
  while (next < all.length) {
    const chunk = all.slice(next, next + 1000);
    next += 1000;
    const res = await fetch(`${base}/api/v1/loan-performance/batches/customers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ customers: chunk }),
    });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`batch answered ${res.status}`);
    requests++;
  }
};
await Promise.all(Array.from({ length: 4 }, worker));
process.stdout.write(
  `${JSON.stringify({ customers: customers.size, loans: loanCount, payments: paymentCount, requests })}\n`,
);
