/**
 * What `leadctl demo` shows, one declarative entry per step. Each runs a real command; a step
 * whose command or fixture is not there is reported as missing, never imitated.
 */

/** What a step may read of the run so far. */
export interface DemoState {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  /** api_key of the campaign without price reject (leads are accepted or rejected at once). */
  directKey: string;
  /** api_key of the price-reject campaign (leads may come back pending with offers). */
  priceRejectKey: string;
  /** The folder kept after the run: rejects and export files. */
  filesDir: string;
  /** Absolute path of a fixture file (fixtures/ of the package). */
  fixture(relative: string): string;
  /** Values picked from earlier steps' output (e.g. the offer id). */
  values: Record<string, string | number>;
}

export interface DemoStep {
  id: string;
  title: string;
  /** A few lines for a newcomer: why an operator runs this. */
  explain: string;
  /** The subcommand path, e.g. ['lists', 'create']. */
  command: string[];
  /** Fixture files (relative to fixtures/) the step reads. */
  fixtures?: string[];
  /** Arguments after the command path. */
  args(s: DemoState): string[];
  /** Extra environment for this command, with how to show each value (never a secret itself). */
  env?(s: DemoState): Record<string, { value: string; shown: string }>;
  /** Text piped to the command's stdin, and how to show it. */
  stdin?(s: DemoState): { text: string; shown: string };
  /** Run with --output json (instead of table) because a later step needs a value from it. */
  json?: boolean;
  /** The exit codes that are this step's intended outcome, and what each means here. */
  expect: Record<number, string>;
  /** Later steps depend on this one: stop the demo if it does not end as expected. */
  essential?: boolean;
  /** Picks values from the command's stdout (json steps) for later steps. */
  capture?(stdout: string, s: DemoState): void;
}

const LIST_FIXTURE = 'demo/ssn-suppression-messy.csv';
const LMS_MAPPING = 'lms/mapping.json';
const LMS_LOANS = 'lms/loans.csv';
const LMS_PAYMENTS = 'lms/payments.csv';
// Dry runs by email, so that no SSN is printed in full.
/** An email no demo lead has: the dry run passes. */
const FRESH_EMAIL = 'new.applicant@example.com';
/** The email of fixtures/legacy/accepted.json: bought a moment ago, so the dry run fails. */
const PURCHASED_EMAIL = 'maria.gonzalez@example.com';

export const DEMO_STEPS: DemoStep[] = [
  {
    id: 'login',
    title: 'Log in',
    explain:
      'leadctl keeps credentials in profiles. `auth login` proves the client id and secret work by\n' +
      'getting a token, then saves them (the demo uses a throwaway config folder, never yours).\n' +
      'The secret comes on stdin so it never shows in `ps` or shell history.',
    command: ['auth', 'login'],
    args: (s) => ['--base-url', s.baseUrl, '--client-id', s.clientId, '--client-secret-stdin'],
    stdin: (s) => ({ text: s.clientSecret + '\n', shown: '(the client secret)' }),
    expect: { 0: 'logged in; the profile is saved' },
    essential: true,
  },
  {
    id: 'lists-create',
    title: 'Upload an SSN suppression list from a messy CSV',
    explain:
      'Ops keep suppression lists in spreadsheets: dashes, spaces, dots, quotes, a byte-order mark,\n' +
      'blank lines, duplicates and a few impossible SSNs. leadctl fixes what is only formatting,\n' +
      'drops duplicates, reports the invalid rows by row number (SSNs masked) and uploads the rest.',
    command: ['lists', 'create'],
    fixtures: [LIST_FIXTURE],
    args: (s) => [
      '--name',
      'Demo SSN suppression',
      '--type',
      'ssn',
      '--skip-invalid',
      '--rejects',
      `${s.filesDir}/list-rejects.csv`,
      s.fixture(LIST_FIXTURE),
    ],
    expect: { 4: 'uploaded the valid SSNs; the invalid rows are in the rejects file' },
    essential: true,
  },
  {
    id: 'customers-batch',
    title: 'Push the LMS export: customers, loans and payments',
    explain:
      "The nightly job. The export is in the LMS's shape (its column names, dollars, US dates in\n" +
      'Chicago time, status codes); the mapping converts it. Records are validated locally, sent in\n' +
      'chunks of customers (4 here to show several; up to 1000 in production), and every broken row\n' +
      'ends in the rejects file with its file, row and reason.',
    command: ['customers', 'batch'],
    fixtures: [LMS_MAPPING, LMS_LOANS, LMS_PAYMENTS],
    args: (s) => [
      '--mapping',
      s.fixture(LMS_MAPPING),
      '--loans',
      s.fixture(LMS_LOANS),
      '--payments',
      s.fixture(LMS_PAYMENTS),
      '--chunk-size',
      '4',
      '--rejects',
      `${s.filesDir}/batch-rejects.csv`,
    ],
    expect: { 4: 'pushed; the broken rows are in the rejects file' },
  },
  {
    id: 'legacy-accepted',
    title: 'Post a lead that is accepted',
    explain:
      'The legacy lead post: the campaign api key comes from LEADCTL_API_KEY (or --api-key-file), the lead\n' +
      'is validated locally first, and the answer is Accepted with the redirect URL.',
    command: ['legacy', 'post'],
    fixtures: ['legacy/accepted.json'],
    env: (s) => ({ LEADCTL_API_KEY: { value: s.directKey, shown: '<Sandbox Direct campaign key>' } }),
    args: (s) => [s.fixture('legacy/accepted.json')],
    expect: { 0: 'Accepted (A)' },
  },
  {
    id: 'legacy-rejected',
    title: 'Post a lead whose SSN is on the suppression list',
    explain: "This applicant's SSN is on the list uploaded above (row 2 of its file), so the lead is Rejected.",
    command: ['legacy', 'post'],
    fixtures: ['legacy/suppressed.json'],
    env: (s) => ({ LEADCTL_API_KEY: { value: s.directKey, shown: '<Sandbox Direct campaign key>' } }),
    args: (s) => [s.fixture('legacy/suppressed.json')],
    expect: { 4: 'Rejected (R) by the suppression list' },
  },
  {
    id: 'legacy-pending',
    title: 'Post a lead to a price-reject campaign: pending, with offers',
    explain:
      'A campaign with price reject answers Pending with lower-priced offers that expire. Scripts read\n' +
      'answers with --output json; the demo takes the first offer id from it for the next step.',
    command: ['legacy', 'post'],
    fixtures: ['legacy/price-reject.json'],
    env: (s) => ({ LEADCTL_API_KEY: { value: s.priceRejectKey, shown: '<Sandbox Price Reject campaign key>' } }),
    args: (s) => [s.fixture('legacy/price-reject.json')],
    json: true,
    expect: { 6: 'Pending (P) with price-reject offers' },
    capture(stdout, s) {
      // An array, one record per lead of the file.
      const [answer] = JSON.parse(stdout) as Array<{ price_reject?: { offers?: Array<{ id: number }> } }>;
      const offer = answer?.price_reject?.offers?.[0];
      if (offer) s.values.offerId = offer.id;
    },
  },
  {
    id: 'legacy-accept-offer',
    title: 'Accept the offer',
    explain: 'Accepting an offer turns the pending lead into an accepted one, with its redirect URL.',
    command: ['legacy', 'accept-offer'],
    env: (s) => ({ LEADCTL_API_KEY: { value: s.priceRejectKey, shown: '<Sandbox Price Reject campaign key>' } }),
    args: (s) => ['--offer-id', String(s.values.offerId ?? 'missing')],
    expect: { 0: 'offer accepted: the lead is Accepted (A)' },
  },
  {
    id: 'dry-run-pass',
    title: 'Dry run: an applicant never seen before',
    explain:
      'Before paying for underwriting, ops ask whether an applicant (by SSN or email) was already\n' +
      'bought or recently underwritten. PASS exits 0 and FAIL exits 4, so shell scripts can branch on it.',
    command: ['dry-run'],
    args: () => ['--email', FRESH_EMAIL],
    expect: { 0: 'PASS' },
  },
  {
    id: 'dry-run-fail',
    title: 'Dry run: the applicant bought a moment ago',
    explain: "The accepted lead's email: the service has already purchased this applicant.",
    command: ['dry-run'],
    args: () => ['--email', PURCHASED_EMAIL],
    expect: { 4: 'FAIL (previously purchased)' },
  },
  {
    id: 'leads-ids',
    title: "Today's lead ids",
    explain: "Analysts pull the ids of a day (following the service's cursor across pages).",
    command: ['leads', 'ids'],
    args: () => ['--date', 'today', '--all'],
    expect: { 0: 'the ids of the leads posted above' },
  },
  {
    id: 'leads-export',
    title: "Export today's leads to CSV",
    explain:
      "Each lead is fetched (with bounded concurrency and retries) and written as one CSV row, with\nthe data dictionary's column names as headers.",
    command: ['leads', 'export'],
    args: (s) => ['--date', 'today', '--out', `${s.filesDir}/leads-export.csv`],
    expect: { 0: 'every lead exported' },
  },
  {
    id: 'systems-ls',
    title: 'Management systems',
    explain: 'The ids to put in management_system_id when reporting loans.',
    command: ['systems', 'ls'],
    args: () => [],
    expect: { 0: 'listed' },
  },
];
