import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { afterAll, describe, expect, it } from 'vitest';
import type { Bind, Register } from '../../../src/cli/command.js';
import { commandGroups } from '../../../src/cli/groups.js';
import { buildProgram } from '../../../src/cli/main.js';
import { completionScript, COMPLETION_SHELLS, programSpec } from '../../../src/output/completion.js';
import { allCommands } from '../../../src/output/completion-spec.js';
import { LIST_TYPE_ALIASES } from '../../../src/schema/lists.js';
import { OUTPUT_FORMATS } from '../../../src/io/output-format.js';
import { memoryIO } from '../../helpers/memory-io.js';

const noBind: Bind = () => async () => {};
const program = (groups: Register[] = commandGroups): Command => buildProgram(memoryIO(), noBind, groups);
const dir = mkdtempSync(join(tmpdir(), 'leadctl-completion-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const hasShell = (shell: string) => spawnSync(shell, ['-c', 'exit 0']).status === 0;

/** Sources the bash script, sets COMP_WORDS as if the user pressed Tab after `line`, and returns COMPREPLY. */
function bashComplete(script: string, line: string[], cwd = process.cwd()): string[] {
  const file = join(dir, 'leadctl.bash');
  writeFileSync(file, script);
  const words = line.map((w) => `'${w.replace(/'/g, `'\\''`)}'`).join(' ');
  const run = spawnSync(
    'bash',
    [
      '--norc',
      '--noprofile',
      '-c',
      `source '${file}'; COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); _leadctl; printf '%s\\n' "\${COMPREPLY[@]}"`,
    ],
    {
      encoding: 'utf8',
      cwd,
    },
  );
  expect(run.stderr).toBe('');
  expect(run.status).toBe(0);
  return run.stdout.split('\n').filter((l) => l !== '');
}

describe('the completion spec follows the commander tree', () => {
  const spec = programSpec(program());
  const paths = allCommands(spec).map((c) => c.path.join(' '));

  it('holds every registered command and subcommand', () => {
    const expected: string[] = [];
    const walk = (cmd: Command, path: string[]) => {
      for (const sub of cmd.commands) {
        expected.push([...path, sub.name()].join(' '));
        walk(sub, [...path, sub.name()]);
      }
    };
    walk(program(), []);
    expect(expected.length).toBeGreaterThan(10);
    for (const path of expected) expect(paths).toContain(path);
    expect(paths).toContain('lists create');
    expect(paths).toContain('completion');
  });

  it('gives --type the list-type aliases and --output the output formats', () => {
    const create = allCommands(spec).find((c) => c.path.join(' ') === 'lists create')!;
    const type = create.options.find((o) => o.names.includes('--type'))!;
    expect(type.value).toEqual({ kind: 'words', words: Object.keys(LIST_TYPE_ALIASES) });
    const output = create.options.find((o) => o.names.includes('--output'))!;
    expect(output.value).toEqual({ kind: 'words', words: [...OUTPUT_FORMATS] });
    expect(create.operands).toEqual({ kind: 'files' });
  });

  it('picks up a command group added later without any change to the generators', () => {
    const extra: Register = (p) => {
      p.command('frobnicate')
        .description('a group that does not exist')
        .command('twiddle')
        .option('--knob <file>', 'a file');
    };
    for (const shell of COMPLETION_SHELLS) {
      const script = completionScript(shell, program([...commandGroups, extra]), '9.9.9');
      expect(script).toContain('frobnicate/twiddle');
      expect(script).toContain('knob');
    }
  });
});

describe.each(COMPLETION_SHELLS)('the %s script', (shell) => {
  const script = completionScript(shell, program(), '1.2.3');
  const spec = programSpec(program());

  it('names every command under its parent, and every option', () => {
    for (const cmd of allCommands(spec)) {
      for (const sub of cmd.commands) expect(script).toContain(`${cmd.path.join(' ')}/${sub.name}`);
      for (const option of cmd.ownOptions)
        for (const name of option.names) expect(script).toContain(shell === 'fish' ? name.replace(/^--?/, '') : name);
    }
    for (const alias of Object.keys(LIST_TYPE_ALIASES)) expect(script).toContain(alias);
    expect(script).toContain('1.2.3');
  });

  it('is valid syntax for its shell where that shell is installed', () => {
    const file = join(dir, `script.${shell}`);
    writeFileSync(file, script);
    if (shell === 'bash' || hasShell(shell)) {
      const check = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
      expect(check.stderr).toBe('');
      expect(check.status).toBe(0);
    }
  });
});

describe('bash completion in action', () => {
  const script = completionScript('bash', program(), '0.0.0');

  it('offers the top-level commands, then the subcommands of a group', () => {
    const top = bashComplete(script, ['leadctl', '']);
    for (const name of ['auth', 'systems', 'lists', 'leads', 'dry-run', 'legacy', 'sandbox', 'completion'])
      expect(top).toContain(name);
    expect(bashComplete(script, ['leadctl', 'li'])).toEqual(['lists']);
    expect(bashComplete(script, ['leadctl', 'lists', ''])).toEqual(
      expect.arrayContaining(['create', 'update', 'get', 'ls']),
    );
  });

  it('offers the list-type aliases after --type, also in the --type=VALUE form', () => {
    expect(bashComplete(script, ['leadctl', 'lists', 'create', '--type', ''])).toEqual(Object.keys(LIST_TYPE_ALIASES));
    expect(bashComplete(script, ['leadctl', 'lists', 'update', '7', '--type', 's'])).toEqual(['ssn', 'ssn4']);
    expect(bashComplete(script, ['leadctl', 'lists', 'create', '--type', '=', 'em'])).toEqual(['email', 'employer']);
  });

  it('offers output formats after a global option, wherever it is typed', () => {
    expect(bashComplete(script, ['leadctl', '--output', ''])).toEqual([...OUTPUT_FORMATS]);
    expect(bashComplete(script, ['leadctl', 'leads', 'ids', '-o', 'nd'])).toEqual(['ndjson']);
  });

  it('steps over option values and aliases when finding the command', () => {
    // "-o json" must not be mistaken for a command; "list" is an alias of "systems ls".
    expect(bashComplete(script, ['leadctl', '-o', 'json', 'lists', 'cr'])).toEqual(['create']);
    const options = bashComplete(script, ['leadctl', 'systems', 'list', '--']);
    expect(options).toContain('--output');
    expect(options).not.toContain('--type');
  });

  it('offers the options of the command being typed', () => {
    const options = bashComplete(script, ['leadctl', 'lists', 'create', '--']);
    for (const name of [
      '--name',
      '--type',
      '--column',
      '--skip-invalid',
      '--rejects',
      '--validate-only',
      '--output',
      '--help',
    ])
      expect(options).toContain(name);
    expect(options).not.toContain('--version');
  });

  it('completes file names for file arguments and file options', () => {
    const cwd = mkdtempSync(join(dir, 'files-'));
    writeFileSync(join(cwd, 'ssns-2024.csv'), '');
    writeFileSync(join(cwd, 'other.txt'), '');
    expect(bashComplete(script, ['leadctl', 'lists', 'create', '--name', 'x', 'ssn'], cwd)).toEqual(['ssns-2024.csv']);
    expect(bashComplete(script, ['leadctl', 'leads', 'export', '--out', 'oth'], cwd)).toEqual(['other.txt']);
  });

  it('offers the shells for completion itself', () => {
    expect(bashComplete(script, ['leadctl', 'completion', ''])).toEqual(['bash', 'zsh', 'fish']);
  });
});
