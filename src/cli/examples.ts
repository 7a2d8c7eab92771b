/**
 * Real examples for each command's `--help`, for the commands that do not carry their own next to
 * their flags. Kept in one table so that a group module stays about flags and actions; a test checks
 * that every command's help ends up with examples.
 */
export const COMMAND_EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  auth: [
    'leadctl auth login --base-url https://api.example.com --client-id ID',
    'leadctl auth status',
    'curl -H "Authorization: Bearer $(leadctl auth token)" https://api.example.com/api/v1/resources/management-systems',
  ],
  'auth login': [
    'leadctl auth login --base-url https://api.example.com --client-id ID          (asks for the secret, hidden)',
    'pass show leadctl | leadctl auth login --client-id ID --client-secret-stdin',
    'leadctl --profile staging auth login --base-url https://staging.example.com --client-id ID --client-secret-file ~/.leadctl-secret',
  ],
  'auth status': ['leadctl auth status', 'leadctl auth status --all', 'leadctl --profile staging auth status -o json'],
  'auth logout': [
    'leadctl auth logout',
    'leadctl --profile old auth logout --remove',
    'leadctl --profile old auth logout --remove --yes     (from a script)',
  ],
  'auth token': [
    'curl -H "Authorization: Bearer $(leadctl auth token)" https://api.example.com/api/v1/resources/management-systems',
    'leadctl auth token -o json     (with its expiry)',
  ],
  systems: ['leadctl systems ls', 'leadctl systems ls -o csv > systems.csv'],
  'systems ls': ['leadctl systems ls', 'leadctl systems ls -o csv > systems.csv'],
  lists: [
    'leadctl lists ls',
    'leadctl lists create ssns.csv --name "Do not lend" --type ssn',
    'leadctl lists diff 12 ssns.csv',
    'leadctl lists update 12 ssns.csv --yes',
  ],
  'lists create': [
    'leadctl lists create ssns.csv --name "Do not lend" --type ssn',
    'leadctl lists create zips.csv --name "Closed ZIPs" --type zip --column zip_code --skip-invalid --rejects zip-rejects.csv',
    'leadctl lists create ssns.csv --name "Do not lend" --type ssn --validate-only',
  ],
  'lists update': [
    'leadctl lists update 12 ssns.csv',
    'leadctl lists update 12 ssns.csv --yes --skip-invalid --rejects rejects.csv     (cron)',
    'gunzip -c ssns.csv.gz | leadctl lists update 12 - --type ssn --yes',
  ],
  'lists diff': [
    'leadctl lists diff 12 ssns.csv',
    'leadctl lists diff 12 ssns.csv --show     (the added values, masked)',
    'leadctl lists diff 12 ssns.csv -o json',
  ],
  'lists get': ['leadctl lists get 12', 'leadctl lists get 12 -o json'],
  'lists ls': ['leadctl lists ls', 'leadctl lists ls --all -o csv > lists.csv'],
  customers: ['leadctl customers batch export.csv --mapping mapping.json', 'leadctl customers push lead-loan.json'],
  doctor: [
    'leadctl doctor',
    'leadctl --profile nightly doctor -o json     (an array of checks: name, status, value, hint)',
    'leadctl doctor --offline     (this machine only: nothing is sent)',
    'leadctl doctor --cron-path /usr/local/bin:/usr/bin:/bin     (the PATH your crontab sets)',
  ],
  state: ['leadctl state show', 'leadctl --profile nightly state forget --yes'],
  'state show': ['leadctl state show', 'leadctl --profile nightly state show -o json'],
  'state forget': [
    'leadctl --profile nightly state forget',
    'leadctl --profile nightly state forget --yes     (from a script)',
  ],
  'customers batch': [
    'leadctl customers batch export.csv --mapping mapping.json --rejects rejects.csv > summary.json',
    'leadctl customers batch --loans loans.csv --payments payments.csv --mapping mapping.json',
    'leadctl customers batch export.csv --mapping mapping.json --changed-only     (nightly: only what changed)',
    'leadctl customers batch export.csv --mapping mapping.json --resume     (after an interrupted run)',
  ],
  'customers push': [
    'leadctl customers push customers.csv --mapping mapping.json --rejects rejects.csv',
    'leadctl customers push - < customer.json',
  ],
  loans: ['leadctl loans push loans.csv --mapping mapping.json'],
  'loans push': [
    'leadctl loans push loans.csv --mapping mapping.json --rejects rejects.csv',
    'leadctl loans push loans.ndjson --validate-only',
  ],
  payments: ['leadctl payments push payments.csv --mapping mapping.json'],
  'payments push': [
    'leadctl payments push payments.csv --mapping mapping.json --rejects rejects.csv',
    'leadctl payments push payments.ndjson --validate-only',
  ],
  mapping: ['leadctl mapping init export.csv --out mapping.json'],
  'mapping init': [
    'leadctl mapping init export.csv --out mapping.json',
    'leadctl mapping init --loans loans.csv --payments payments.csv --time-zone America/Chicago --out mapping.json',
  ],
  leads: [
    'leadctl leads ids --date yesterday --all',
    'leadctl leads get 1042',
    'leadctl leads export --date yesterday --out leads.csv',
  ],
  'leads ids': [
    'leadctl leads ids --date 2024-01-05 --all -o ndjson',
    'leadctl leads ids --date yesterday --limit 500',
    'leadctl leads ids --date yesterday --limit 500 --cursor <next_cursor printed by the run before>',
  ],
  'leads get': [
    'leadctl leads get 1042',
    'leadctl leads get 1042 1043 --columns lead_id,email,"Loan Request Amount" -o csv',
  ],
  'leads export': ['leadctl leads export --date yesterday --out leads.csv'],
  'leads dictionary': ['leadctl leads dictionary --search email', 'leadctl leads dictionary -o csv > dictionary.csv'],
  legacy: ['leadctl legacy post lead.json --stamp', 'leadctl legacy accept-offer --offer-id 1'],
  'legacy post': [
    'leadctl legacy post lead.json --api-key-file ~/.campaign-key --stamp',
    'pass show campaign-key | leadctl legacy post lead.json --api-key-stdin',
    'leadctl legacy post leads.ndjson --validate-only',
    'cat lead.json | leadctl legacy post - -o json',
  ],
  'legacy accept-offer': [
    'LEADCTL_API_KEY_FILE=~/.price-reject-key leadctl legacy accept-offer --offer-id 1',
    'leadctl legacy accept-offer --offer-id 1 -o json',
  ],
  sandbox: ['leadctl sandbox start --memory --save-profile sandbox'],
  'sandbox start': [
    'leadctl sandbox start --memory --save-profile sandbox',
    'leadctl sandbox start --save-profile sandbox --env > sandbox.env 2> sandbox.log &',
    'leadctl sandbox start --port 8080 --fail-rate 0.2 --rate-limit 5     (rehearse retries)',
  ],
  'dry-run': [
    'leadctl dry-run --ssn 123-45-6789 && echo "not bought before"',
    'leadctl dry-run --email ann@example.com --purchased-lookback 30 --underwriting-lookback off',
    'leadctl dry-run --file applicants.csv --out checked.csv',
  ],
  demo: ['leadctl demo', 'leadctl demo --keep'],
  completion: ['source <(leadctl completion bash)', 'leadctl completion fish | source'],
};

/** The help text commander prints after a command's own. */
export function examplesText(lines: readonly string[]): string {
  return `\nExamples:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}
