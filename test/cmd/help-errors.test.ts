import { describe, expect, it } from 'vitest';
import type { CommandUnknownOpts as Command } from '@commander-js/extra-typings';
import { buildProgram, main, usageMessage } from '../../src/cli/main.js';
import { memoryIO } from '../helpers/memory-io.js';

/** Every command path with its subcommands, e.g. ['lists', 'create']. */
function commandPaths(): string[][] {
  const program = buildProgram(memoryIO(), () => async () => {});
  const paths: string[][] = [];
  const walk = (cmd: Command, path: string[]) => {
    for (const sub of cmd.commands) {
      paths.push([...path, sub.name()]);
      walk(sub, [...path, sub.name()]);
    }
  };
  walk(program, []);
  return paths;
}

describe('help that teaches', () => {
  const paths = commandPaths();
  it('finds every command', () => {
    expect(paths.length).toBeGreaterThan(30);
  });
  it.each(paths.map((p) => [p.join(' ')]))(
    '`leadctl %s --help` has examples and lists the global options',
    async (path) => {
      const io = memoryIO();
      expect(await main([...path.split(' '), '--help'], io)).toBe(0);
      const help = io.stdoutText();
      expect(help).toMatch(/\nExamples?:\n {2}\S/);
      expect(help).toContain('Global Options:');
      expect(help).toContain('-o, --output <format>');
      expect(help).toContain('--base-url <url>');
    },
  );
  it.each(
    [[''], ...paths.filter((p) => p.length === 1).map((p) => [p[0]!])].filter(([group]) => {
      if (group === '') return true;
      const program = buildProgram(memoryIO(), () => async () => {});
      return program.commands.find((c) => c.name() === group)!.commands.length > 0;
    }),
  )('`leadctl %s --help` lists its commands before the options and the global options', async (group) => {
    const io = memoryIO();
    expect(await main([...(group ? [group] : []), '--help'], io)).toBe(0);
    const lines = io.stdoutText().split('\n');
    const commands = lines.indexOf('Commands:');
    expect(commands).toBeGreaterThan(0);
    expect(commands).toBeLessThan(lines.indexOf('Options:'));
    if (group) expect(commands).toBeLessThan(lines.indexOf('Global Options:'));
    // The usage line and the description come first, then the commands.
    expect(lines[0]).toMatch(/^Usage: leadctl /);
    expect(lines.slice(1, commands).some((l) => l.startsWith('  '))).toBe(false);
  });
  it('a command without subcommands keeps its options first', async () => {
    const io = memoryIO();
    expect(await main(['lists', 'ls', '--help'], io)).toBe(0);
    const lines = io.stdoutText().split('\n');
    expect(lines.indexOf('Commands:')).toBe(-1);
    expect(lines.indexOf('Options:')).toBeLessThan(lines.indexOf('Global Options:'));
  });
  it('the top-level help has examples too', async () => {
    const io = memoryIO();
    expect(await main(['--help'], io)).toBe(0);
    expect(io.stdoutText()).toMatch(/Examples:\n {2}leadctl /);
  });
});

describe('one style for every error line', () => {
  it("commander errors read like leadctl's own: Error: …, with a hint naming the command", async () => {
    const io = memoryIO({ tty: true });
    expect(await main(['lists', 'create', 'x.csv', '--name', 'a', '--type', 'ssn', '--skip-invalidd'], io)).toBe(2);
    expect(io.stderrText()).toBe(
      "Error: unknown option '--skip-invalidd' (did you mean --skip-invalid?)\nHint: run `leadctl lists create --help` for usage and examples\n",
    );
    expect(io.stdoutText()).toBe('');
  });
  it('no lowercase `error:` line for any kind of usage error', async () => {
    for (const argv of [
      ['lits'],
      ['--outptu', 'json'],
      ['-o', 'xml', 'lists', 'ls'],
      ['lists', 'get'],
      ['leads', 'export', '--out'],
    ]) {
      const io = memoryIO({ tty: true });
      expect(await main(argv, io)).toBe(2);
      expect(io.stderrText()).toMatch(/^Error: /);
      expect(io.stderrText()).not.toMatch(/^error:/m);
    }
  });
  it('a mistyped command gets a suggestion', async () => {
    const io = memoryIO({ tty: true });
    expect(await main(['lits'], io)).toBe(2);
    expect(io.stderrText()).toContain("Error: unknown command 'lits' (did you mean lists?)");
  });
  it('turns commander messages into one line', () => {
    expect(usageMessage("error: unknown option '--x'\n(Did you mean --y?)")).toBe(
      "unknown option '--x' (did you mean --y?)",
    );
    expect(usageMessage("error: missing required argument 'id'")).toBe("missing required argument 'id'");
  });
});

describe('usage errors for scripts', () => {
  it('stdout and stderr piped, no format chosen (JSON implied): the usage error once, as JSON on stderr; stdout stays clean', async () => {
    const io = memoryIO({ tty: false });
    expect(await main(['lists', 'ls', '--pgae', '2'], io)).toBe(2);
    expect(io.stdoutText()).toBe('');
    // One document, not the text and then the document: a log gets each error once.
    const lines = io.stderrText().trimEnd().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0]!)).toEqual({
      error: {
        code: 'usage',
        message: "unknown option '--pgae' (did you mean --page?)",
        exit_code: 2,
        hint: 'run `leadctl lists ls --help` for usage and examples',
      },
    });
  });
  it('-o table with nothing on a terminal: the error once, as text', async () => {
    const io = memoryIO({ tty: false });
    expect(await main(['-o', 'table', 'lists', 'ls', '--pgae', '2'], io)).toBe(2);
    expect(io.stderrText()).toBe(
      "Error: unknown option '--pgae' (did you mean --page?)\nHint: run `leadctl lists ls --help` for usage and examples\n",
    );
  });
  it('-o json with nothing on a terminal: the document on stdout, the text once on stderr', async () => {
    const io = memoryIO({ tty: false });
    expect(await main(['-o', 'json', 'lists', 'ls', '--pgae', '2'], io)).toBe(2);
    expect(JSON.parse(io.stdoutText()).error).toMatchObject({ code: 'usage', exit_code: 2 });
    expect(io.stderrText()).not.toContain('{');
    expect(io.stderrText().match(/^Error: /gm)).toHaveLength(1);
  });
  it("-o json: the usage error is the run's one JSON document on stdout", async () => {
    const io = memoryIO({ tty: true });
    expect(await main(['-o', 'json', 'lists', 'ls', '--pgae', '2'], io)).toBe(2);
    expect(JSON.parse(io.stdoutText()).error).toMatchObject({ code: 'usage', exit_code: 2 });
  });
  it('stderr on a terminal gets text only', async () => {
    const io = memoryIO({ tty: false });
    Object.assign(io.stderr, { isTTY: true });
    expect(await main(['lists', 'ls', '--pgae', '2'], io)).toBe(2);
    expect(io.stderrText()).not.toContain('{');
  });
  it("a flag whose value is refused by leadctl's own check is JSON too", async () => {
    const io = memoryIO({ tty: false });
    expect(await main(['--timeout', 'soon', 'systems', 'ls'], io)).toBe(2);
    expect(JSON.parse(io.stderrText().trimEnd().split('\n').at(-1)!).error).toMatchObject({
      code: 'usage',
      exit_code: 2,
    });
  });
  it('an explicit other format: no JSON', async () => {
    const io = memoryIO({ tty: false });
    expect(await main(['-o', 'csv', 'lists', 'ls', '--pgae', '2'], io)).toBe(2);
    expect(io.stdoutText()).toBe('');
    expect(io.stderrText()).not.toContain('{');
  });
  it('a group without its command: its help on stderr, exit 2, and the JSON line when piped', async () => {
    const io = memoryIO({ tty: false });
    expect(await main(['lists'], io)).toBe(2);
    expect(io.stderrText()).toContain('Usage: leadctl lists');
    expect(JSON.parse(io.stderrText().trimEnd().split('\n').at(-1)!).error.message).toBe(
      'leadctl lists needs a command',
    );
    expect(JSON.parse(io.stderrText().trimEnd().split('\n').at(-1)!).error.hint).toBe(
      'add one of the commands above, e.g. `leadctl lists ls`',
    );
    // Written once: the JSON line, not also a Hint: line.
    expect(io.stderrText()).not.toContain('\nHint: ');
    const person = memoryIO({ tty: true });
    expect(await main(['lists'], person)).toBe(2);
    expect(person.stderrText()).toContain('Usage: leadctl lists');
    expect(person.stderrText()).toContain('\nHint: add one of the commands above, e.g. `leadctl lists ls`\n');
    expect(person.stderrText()).not.toContain('{"error"');
  });
});

describe('did you mean, for values', () => {
  it('a mistyped list type', async () => {
    const io = memoryIO({ tty: true });
    expect(await main(['lists', 'create', 'x.csv', '--name', 'a', '--type', 'phnoe'], io)).toBe(2);
    expect(io.stderrText()).toContain('Error: unknown list type "phnoe" (did you mean phone?)');
  });
});

describe('usage errors never repeat what may be a secret or personal data given in the wrong place', () => {
  const SECRET = 'S3cr3t-CANARY-x9Qz+/=&Zq';
  it.each([
    [['auth', 'login', '--client-id', 'X', '--client-secret-stdin', SECRET], /got 1 \(not repeated here/],
    [['auth', 'token', SECRET], /got 1 \(not repeated here/],
    // The shape of a credential is redacted too, whatever else is done.
    [['auth', 'login', `--client-secret=${SECRET}`], /unknown option '--client-secret=(…|\[REDACTED\])'/],
    [['auth', 'login', `--client-secert=${SECRET}`], /unknown option '--client-secert=…'/],
    [['legacy', 'post', `--apikey=${SECRET}`, 'lead.json'], /unknown option '--apikey=…'/],
    [[SECRET], /unknown command \(not repeated here/],
    [['dry-run', '--ssm=219-45-7781'], /unknown option '--ssm=…'/],
    // A secret that begins with a dash reads as an option.
    [['auth', 'login', '--client-secret-stdin', '-Ab9x_S3cr3t-CANARY-x9Qz'], /an unknown option \(not repeated here/],
    [['dry-run', '219-45-7781'], /got 1 \(not repeated here/],
  ])('%j', async (argv, says) => {
    for (const format of ['table', 'json']) {
      const io = memoryIO({ tty: false });
      expect(await main(['-o', format, ...argv], io)).toBe(2);
      const all = io.stdoutText() + io.stderrText();
      expect(all).toMatch(says);
      for (const part of ['CANARY', 'x9Qz', '&Zq', '219-45', '7781']) expect(all, part).not.toContain(part);
    }
  });

  it('still names a mistyped command or flag, and masks a number quoted in an invalid value', async () => {
    const io = memoryIO({ tty: false });
    expect(await main(['-o', 'table', 'lists', 'ls', '--pgae', '2'], io)).toBe(2);
    expect(io.stderrText()).toContain("unknown option '--pgae' (did you mean --page?)");
    const ssn = memoryIO({ tty: false });
    expect(await main(['-o', 'table', 'lists', 'ls', '--page', '219457781x'], ssn)).toBe(2);
    expect(ssn.stderrText()).toContain('--page');
    expect(ssn.stderrText()).not.toContain('219457781');
  });
});
