import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { afterAll, describe, expect, it } from 'vitest';
import { buildProgram, main } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';

/**
 * Every usage error of every command says what to do next: a `Hint:` line on stderr, and the same
 * hint in the JSON form. The cases are made from the commander tree itself (so a new command is
 * covered without a change here), plus the usage errors that commands raise themselves.
 */

const home = mkdtempSync(join(tmpdir(), 'leadctl-hints-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const env = { LEADCTL_CONFIG_DIR: join(home, 'config'), LEADCTL_STATE_DIR: join(home, 'state') };

interface Case {
  argv: string[];
  /** What the hint must say besides being there. */
  says?: RegExp;
}

/** Whatever a required argument needs to get past commander: a list id, a lead id, a file, a shell. */
function argumentValue(name: string): string {
  return { id: '12', shell: 'bash' }[name] ?? 'x.csv';
}

function casesOf(cmd: Command, path: string[]): Array<[string, Case]> {
  const cases: Array<[string, Case]> = [];
  const label = (what: string) => `${path.join(' ')}: ${what}`;
  if (cmd.commands.length > 0) {
    cases.push([label('no command'), { argv: path, says: /one of the commands above, e\.g\. `leadctl / }]);
    cases.push([label('an unknown command'), { argv: [...path, 'frobnicate'], says: /the commands of `leadctl/ }]);
    return cases;
  }
  const required = cmd.registeredArguments.filter((a) => a.required);
  const args = required.map((a) => argumentValue(a.name()));
  const mandatory = cmd.options.filter((o) => o.mandatory);
  const mandatoryArgv = mandatory.flatMap((o) => [o.long!, o.long === '--type' ? 'ssn' : '1']);
  cases.push([label('an unknown option'), { argv: [...path, ...args, ...mandatoryArgv, '--frobnicate'] }]);
  if (required.length > 0)
    cases.push([
      label('a missing argument'),
      { argv: [...path], says: new RegExp(`^usage: leadctl ${path.join(' ')} `) },
    ]);
  if (!cmd.registeredArguments.some((a) => a.variadic))
    cases.push([
      label('an argument too many'),
      { argv: [...path, ...args, ...mandatoryArgv, 'extra'], says: /^usage: leadctl / },
    ]);
  for (const option of mandatory)
    cases.push([
      label(`${option.long} missing`),
      {
        argv: [...path, ...args, ...mandatoryArgv.filter((_, i, all) => all[i - (i % 2)] !== option.long)],
        says: /^usage: leadctl .*; e\.g\. /,
      },
    ]);
  for (const option of cmd.options.filter((o) => o.required && !o.mandatory && o.long !== '--help'))
    cases.push([
      label(`${option.long} without its value`),
      { argv: [...path, ...args, ...mandatoryArgv, option.long!], says: /^usage: leadctl / },
    ]);
  for (const option of cmd.options.filter((o) => o.argChoices))
    cases.push([
      label(`${option.long} with a value not among its choices`),
      { argv: [...path, ...args, ...mandatoryArgv, option.long!, 'frobnicate'], says: /^usage: leadctl / },
    ]);
  return cases;
}

function commanderCases(): Array<[string, Case]> {
  const program = buildProgram(memoryIO(), () => async () => undefined);
  const cases: Array<[string, Case]> = [
    ['leadctl: an unknown command', { argv: ['frobnicate'], says: /the commands of `leadctl` are auth, / }],
    ['leadctl: an unknown global option', { argv: ['--frobnicate', 'systems', 'ls'] }],
    ['leadctl: a refused global option value', { argv: ['--timeout', 'soon', 'systems', 'ls'], says: /--timeout 30/ }],
    ['leadctl: a refused --output', { argv: ['-o', 'xml', 'systems', 'ls'] }],
  ];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      if (sub.name() === 'help') continue;
      cases.push(...casesOf(sub, [...path, sub.name()]));
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return cases;
}

/** Usage errors the commands raise themselves, before they read a file or send anything. */
const commandCases: Array<[string, Case]> = [
  ['customers batch without an export', { argv: ['customers', 'batch'], says: /--mapping mapping\.json/ }],
  [
    'customers batch --max-age without --changed-only',
    { argv: ['customers', 'batch', 'x.csv', '--max-age', '3'], says: /--changed-only/ },
  ],
  ['lists ls --page with --all', { argv: ['lists', 'ls', '--page', '2', '--all'], says: /--all/ }],
  ['mapping init without a file', { argv: ['mapping', 'init'], says: /leadctl mapping init export\.csv/ }],
  ['mapping init with a bad zone', { argv: ['mapping', 'init', 'x.csv', '--time-zone', 'Mars/Base'] }],
  ['dry-run with nothing to check', { argv: ['dry-run'], says: /--ssn/ }],
  ['dry-run --out without --file', { argv: ['dry-run', '--ssn', '123456789', '--out', 'o.csv'], says: /--file/ }],
  ['dry-run --file with --ssn', { argv: ['dry-run', '--file', 'a.csv', '--ssn', '123456789'] }],
  ['a --delimiter of two characters', { argv: ['--delimiter', ';;', 'lists', 'ls'], says: /--delimiter/ }],
  ['a --lists-path without its slash', { argv: ['--lists-path', 'lists', 'lists', 'ls'], says: /--lists-path \// }],
  // No hint of their own: the command's help, named.
  [
    'lists create with a blank --name',
    { argv: ['lists', 'create', 'x.csv', '--name', ' ', '--type', 'ssn'], says: /^run `leadctl lists create --help`/ },
  ],
  [
    'a --base-url that is not http(s)',
    { argv: ['--base-url', 'ftp://example.com', 'systems', 'ls'], says: /^run `leadctl systems ls --help`/ },
  ],
  [
    'legacy post with two api keys',
    { argv: ['legacy', 'post', 'x.json', '--api-key', 'k', '--api-key-stdin'], says: /--api-key-file/ },
  ],
  [
    'auth login with two secret sources',
    {
      argv: ['auth', 'login', '--client-id', 'c', '--client-secret-stdin', '--client-secret-file', 's'],
      says: /--client-secret-file/,
    },
  ],
];

async function usageError(argv: string[]): Promise<{ hint: string; json?: { error: Record<string, unknown> } }> {
  const where = `stderr of leadctl ${argv.join(' ')}`;
  // A person at a terminal: the error as text, with exactly one Hint: line.
  const person = memoryIO({ tty: true, env });
  expect(await main(argv, person), `exit code of leadctl ${argv.join(' ')}`).toBe(2);
  const hints = person
    .stderrText()
    .split('\n')
    .filter((l) => l.startsWith('Hint: '));
  expect(hints, `${where}:\n${person.stderrText()}`).toHaveLength(1);
  const hint = hints[0]!.slice('Hint: '.length);
  if (argv.includes('-o')) return { hint };
  // Piped, no format named (JSON implied): the error written once, as the JSON document, same hint.
  const piped = memoryIO({ tty: false, env });
  expect(await main(argv, piped)).toBe(2);
  const lines = piped.stderrText().trimEnd().split('\n');
  expect(
    lines.filter((l) => l.startsWith('Hint: ') || l.startsWith('Error: ')),
    where,
  ).toEqual([]);
  return { hint, json: JSON.parse(lines.at(-1)!) };
}

describe('every usage error says what to do (Hint:)', () => {
  const cases = commanderCases();
  it('covers every command', () => {
    expect(cases.length).toBeGreaterThan(100);
  });
  it.each([...cases, ...commandCases])('%s', async (_label, { argv, says }) => {
    const { hint, json } = await usageError(argv);
    if (json) expect(json.error).toMatchObject({ code: 'usage', exit_code: 2, hint });
    expect(hint.length).toBeGreaterThan(10);
    if (says) expect(hint).toMatch(says);
  });
});

describe('what the hints say', () => {
  it('an unknown option far from any: the options of the command', async () => {
    expect((await usageError(['lists', 'ls', '--frobnicate'])).hint).toBe(
      'the options of `leadctl lists ls` are --page, --all (and the global ones); run `leadctl lists ls --help` for usage and examples',
    );
  });
  it('an unknown option near one: the suggestion in the message, the help in the hint', async () => {
    const io = memoryIO({ tty: true, env });
    expect(await main(['lists', 'ls', '--al'], io)).toBe(2);
    expect(io.stderrText()).toBe(
      "Error: unknown option '--al' (did you mean --all?)\nHint: run `leadctl lists ls --help` for usage and examples\n",
    );
  });
  it('a missing argument: the usage line and an example', async () => {
    expect((await usageError(['lists', 'get'])).hint).toBe(
      'usage: leadctl lists get [options] <id>; e.g. leadctl lists get 12; run `leadctl lists get --help` for usage and examples',
    );
  });
  it('customers batch with no arguments: --mapping and an example', async () => {
    const { hint } = await usageError(['customers', 'batch']);
    expect(hint).toContain('leadctl customers batch export.csv --mapping mapping.json');
    expect(hint).toContain('leadctl mapping init');
  });
  it('-o json: the hint in the one JSON document on stdout', async () => {
    const io = memoryIO({ tty: true, env });
    expect(await main(['-o', 'json', 'lists', 'get'], io)).toBe(2);
    expect(JSON.parse(io.stdoutText()).error.hint).toMatch(/^usage: leadctl lists get /);
  });
});
