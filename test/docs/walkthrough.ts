/**
 * Runs the README's first-hour walkthrough as a newcomer would paste it: the fenced blocks whose
 * info string is `sh walkthrough` (optionally `exit=N` when the block is meant to end with N), in
 * order, each with bash (-e -o pipefail) in one scratch folder that holds a copy of fixtures/, with
 * a fresh HOME, config and state folder and `leadctl` on PATH. Variables and the current folder
 * carry over from block to block, as in one terminal. Every process a block starts (the sandbox
 * it puts in the background) is stopped at the end.
 *
 *   node test/docs/walkthrough.ts          run it, print each block's output
 *   node test/docs/walkthrough.ts --write  run it and put each block's output (secrets, ports and
 *                                          temporary paths replaced) in the `text walkthrough-output`
 *                                          block that follows it in README.md
 *
 * Self-contained (node builtins only) so that Node runs it directly, types stripped.
 */
import { spawn } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const README = join(ROOT, 'README.md');
/** Where the README tells the reader to work; temporary paths are shown as these. */
const SHOWN_WORK_DIR = '~/leadctl-first-hour';
const BLOCK_TIMEOUT_MS = 120_000;

export interface Block {
  /** 1-based line of the opening fence in its file. */
  line: number;
  code: string;
  expectExit: number;
}

/** One `$ command` of a `console run` transcript in docs/, with the output shown under it. */
export interface TranscriptCommand {
  command: string;
  shown: string;
}

export interface TranscriptBlock extends Block {
  commands: TranscriptCommand[];
}

export interface CommandResult {
  command: string;
  shown: string;
  output: string;
  exitCode: number;
}

export interface BlockResult {
  block: Block;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  /** For a transcript: each command's own output and exit code. */
  commands?: CommandResult[];
}

const FENCE = /^```sh walkthrough(?:\s+exit=(\d+))?\s*$/;

export function walkthroughBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FENCE.exec(lines[i]!);
    if (!m) continue;
    const start = i;
    const code: string[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) code.push(lines[i]!);
    if (i >= lines.length) throw new Error(`README.md line ${start + 1}: walkthrough block is not closed`);
    blocks.push({ line: start + 1, code: code.join('\n'), expectExit: m[1] === undefined ? 0 : Number(m[1]) });
  }
  return blocks;
}

const TRANSCRIPT_FENCE = /^```console run\s*$/;
const MARK = '\x1e';

/**
 * The ```console run transcripts of a page in docs/: `$ ` lines are commands, the lines after
 * each are its output as shown. They run as one shell session (no -e: a transcript shows failing
 * commands too, followed by `$ echo $?`), and `npm run docs:examples` rewrites each output from the run.
 */
export function transcriptBlocks(markdown: string): TranscriptBlock[] {
  const lines = markdown.split('\n');
  const blocks: TranscriptBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!TRANSCRIPT_FENCE.test(lines[i]!)) continue;
    const start = i;
    const commands: TranscriptCommand[] = [];
    for (i++; i < lines.length && lines[i] !== '```'; i++) {
      const line = lines[i]!;
      if (line.startsWith('$ ')) commands.push({ command: line.slice(2), shown: '' });
      else if (commands.length > 0)
        commands[commands.length - 1]!.shown += (commands[commands.length - 1]!.shown ? '\n' : '') + line;
      else throw new Error(`line ${i + 1}: a console run block must start with a $ command`);
    }
    if (i >= lines.length) throw new Error(`line ${start + 1}: console run block is not closed`);
    // The exit code of each command is kept for the next one (`echo $?`) after the marker is printed.
    const code =
      '__rc=0\n' +
      commands
        .map(
          (c, n) =>
            `printf '${MARK}CMD ${n}\\n'; (exit $__rc)\n${c.command}\n__rc=$?; printf '\\n${MARK}RC %d\\n' "$__rc"`,
        )
        .join('\n');
    blocks.push({ line: start + 1, code, expectExit: -1, commands });
  }
  return blocks;
}

function splitTranscript(block: TranscriptBlock, output: string): CommandResult[] {
  const results: CommandResult[] = [];
  const re = new RegExp(`${MARK}CMD (\\d+)\\n([\\s\\S]*?)\\n?${MARK}RC (\\d+)\\n`, 'g');
  for (const m of output.matchAll(re)) {
    const c = block.commands[Number(m[1])]!;
    results.push({ command: c.command, shown: c.shown, output: m[2]!, exitCode: Number(m[3]) });
  }
  return results;
}

/**
 * What is wrong with a transcript's run: a command that failed without a `$ echo $?` after it,
 * or an `echo $?` whose code differs from the one shown, or a command that did not run.
 */
export function transcriptProblems(result: BlockResult): string[] {
  const block = result.block as TranscriptBlock;
  const ran = result.commands ?? [];
  const problems: string[] = [];
  if (ran.length !== block.commands.length)
    problems.push(`line ${block.line}: ${ran.length} of ${block.commands.length} commands ran:\n${result.output}`);
  ran.forEach((r, i) => {
    const next = block.commands[i + 1];
    if (r.command === 'echo $?' && r.output.trim() !== r.shown.trim())
      problems.push(
        `line ${block.line}: \`${block.commands[i - 1]?.command}\` exited ${r.output.trim()}, the page shows ${r.shown.trim()}`,
      );
    if (r.exitCode !== 0 && next?.command !== 'echo $?')
      problems.push(`line ${block.line}: \`${r.command}\` exited ${r.exitCode}:\n${r.output}`);
  });
  return problems;
}

// Saved after each block and restored before the next: variables (not read-only or bash's own) and the folder.
const PROLOGUE = `
__state="$1"
[ -f "$__state/vars" ] && . "$__state/vars"
cd "$(cat "$__state/cwd")"
__save() {
  __rc=$?
  declare -p | grep -E '^declare -[-aAx]* [A-Za-z_][A-Za-z0-9_]*=' \\
    | grep -vE '^declare -[-aAx]* (BASH[A-Z_]*|PWD|OLDPWD|SHLVL|_|PIPESTATUS|FUNCNAME|GROUPS|DIRSTACK|RANDOM|SRANDOM|SECONDS|LINENO|HISTCMD|EPOCHREALTIME|EPOCHSECONDS|COMP_WORDBREAKS|PS4|__[A-Za-z0-9_]*)=' \\
    > "$__state/vars" || true
  pwd > "$__state/cwd"
  exit $__rc
}
trap __save EXIT
exec 2>&1
`;

export interface Walkthrough {
  root: string;
  workDir: string;
  env: Record<string, string>;
  results: BlockResult[];
}

/** A `leadctl` on PATH that runs this checkout's build on the Node running this script. */
function leadctlShim(binDir: string): void {
  mkdirSync(binDir, { recursive: true });
  const shim = join(binDir, 'leadctl');
  writeFileSync(shim, `#!/bin/sh\nexec '${process.execPath}' '${join(ROOT, 'bin', 'leadctl.js')}' "$@"\n`);
  chmodSync(shim, 0o755);
}

function runBlock(block: Block, root: string, env: Record<string, string>, groups: number[]): Promise<BlockResult> {
  const script = join(root, 'block.sh');
  const transcript = 'commands' in block;
  writeFileSync(script, PROLOGUE + (transcript ? 'set -o pipefail\n' : 'set -eo pipefail\n') + block.code + '\n');
  return new Promise((resolveBlock, reject) => {
    // Its own process group: whatever the block leaves running in the background is found and stopped at the end.
    const child = spawn('bash', [script, join(root, 'state')], {
      env,
      cwd: root,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    if (child.pid !== undefined) groups.push(child.pid);
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
    const timer = setTimeout(() => stopGroup(child.pid), BLOCK_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (exitCode, signal) => {
      clearTimeout(timer);
      // A background process that kept the pipes open must not hold the walkthrough up.
      const done = () =>
        resolveBlock(
          transcript
            ? { block, exitCode, signal, output, commands: splitTranscript(block as TranscriptBlock, output) }
            : { block, exitCode, signal, output },
        );
      const grace = setTimeout(done, 500);
      child.once('close', () => {
        clearTimeout(grace);
        done();
      });
    });
  });
}

function stopGroup(pgid: number | undefined, signal: NodeJS.Signals = 'SIGTERM'): boolean {
  if (pgid === undefined) return false;
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether a process (or, with `group`, a process group) still runs. A background process whose
 * shell has exited is an orphan: once it ends it stays a zombie until init reaps it, which on the
 * project machine takes up to 2 s, and `kill(pid, 0)` still finds it. A zombie has stopped: on
 * Linux, /proc says so.
 */
export function running(id: number, group = false): boolean {
  try {
    process.kill(group ? -id : id, 0);
  } catch {
    return false;
  }
  if (!existsSync('/proc/self/stat')) return true;
  const pids = group ? readdirSync('/proc').filter((e) => /^\d+$/.test(e)) : [String(id)];
  return pids.some((pid) => {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      return false; // gone since
    }
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so from the last ')'.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return state !== 'Z' && state !== 'X' && (!group || Number(pgrp) === id);
  });
}

/** Stops every process group the blocks started: SIGTERM, then SIGKILL after 10 s. */
async function stopAll(groups: number[]): Promise<void> {
  for (const g of groups) stopGroup(g);
  const deadline = Date.now() + 10_000;
  while (groups.some((g) => running(g, true)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const g of groups) if (running(g, true)) stopGroup(g, 'SIGKILL');
}

/**
 * Run before a page's transcripts (not shown): a sandbox with a saved profile, this shell pointed
 * at it, and the two campaigns' keys as $CAMPAIGN_KEY and $PRICE_REJECT_KEY.
 */
export const SANDBOX_PRELUDE = `
leadctl sandbox start --memory --save-profile sandbox --env > "$__state/sandbox.env" 2> /dev/null &
until [ -s "$__state/sandbox.env" ]; do sleep 0.1; done
. "$__state/sandbox.env"
PRICE_REJECT_KEY=$LEADCTL_API_KEY
CAMPAIGN_KEY=$(sed -n 's/^# campaign .*: api_key //p' "$__state/sandbox.env" | head -n 1)
unset LEADCTL_API_KEY
`;

export interface RunOptions {
  /** A markdown file whose `sh walkthrough` blocks run (default README.md). */
  readme?: string;
  /** Blocks to run instead of the file's. */
  blocks?: Block[];
  /** Code run first, as a block of its own, not reported. */
  prelude?: string;
  onBlock?: (r: BlockResult) => void;
  keep?: boolean;
}

export async function runWalkthrough(options: RunOptions = {}): Promise<Walkthrough> {
  const blocks = options.blocks ?? walkthroughBlocks(readFileSync(options.readme ?? README, 'utf8'));
  const root = mkdtempSync(join(tmpdir(), 'leadctl-walkthrough-'));
  const workDir = join(root, 'work');
  const home = join(root, 'home');
  mkdirSync(join(root, 'state'), { recursive: true });
  mkdirSync(home, { recursive: true });
  cpSync(join(ROOT, 'fixtures'), join(workDir, 'fixtures'), { recursive: true, dereference: true });
  writeFileSync(join(root, 'state', 'cwd'), workDir);
  leadctlShim(join(root, 'bin'));
  const env: Record<string, string> = {
    PATH: `${join(root, 'bin')}:/usr/local/bin:/usr/bin:/bin`,
    HOME: home,
    LEADCTL_CONFIG_DIR: join(home, '.config', 'leadctl'),
    LEADCTL_STATE_DIR: join(home, '.local', 'state', 'leadctl'),
    LANG: 'C.UTF-8',
    NO_COLOR: '1',
    TZ: 'UTC',
  };
  const groups: number[] = [];
  const results: BlockResult[] = [];
  try {
    if (options.prelude) {
      const ready = await runBlock({ line: 0, code: options.prelude, expectExit: 0 }, root, env, groups);
      if (ready.exitCode !== 0)
        throw new Error(`the prelude failed (${ready.exitCode ?? ready.signal}):\n${ready.output}`);
    }
    for (const block of blocks) {
      const result = await runBlock(block, root, env, groups);
      results.push(result);
      options.onBlock?.(result);
      if (!('commands' in block) && result.exitCode !== block.expectExit) break;
    }
  } finally {
    await stopAll(groups);
    if (!options.keep) rmSync(root, { recursive: true, force: true });
  }
  return { root, workDir, env, results };
}

/** What the reader would see, without this run's secrets, port and temporary folders. */
export function displayed(
  output: string,
  w: Walkthrough,
  secrets: Record<string, string>,
  shownWorkDir = SHOWN_WORK_DIR,
): string {
  let text = output;
  for (const [value, placeholder] of Object.entries(secrets)) if (value) text = text.split(value).join(placeholder);
  return text
    .split(w.workDir)
    .join(shownWorkDir)
    .split(w.env.HOME!)
    .join('~')
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]+/g, '<token>')
    .replace(/127\.0\.0\.1:\d+/g, '127.0.0.1:<port>')
    .replace(/[ \t]+$/gm, '')
    .trimEnd();
}

/** Puts each block's output into the `text walkthrough-output` block right after it. */
export function withOutputs(markdown: string, outputs: Map<number, string>): string {
  const lines = markdown.split('\n');
  const out: string[] = [];
  let lastBlockLine = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    if (FENCE.test(line)) lastBlockLine = i + 1;
    if (line === '```text walkthrough-output' && outputs.has(lastBlockLine)) {
      out.push(line, ...outputs.get(lastBlockLine)!.split('\n'));
      while (i + 1 < lines.length && lines[i + 1] !== '```') i++;
      continue;
    }
    out.push(line);
  }
  return out.join('\n');
}

export const DOCS_DIR = join(ROOT, 'docs');

/** Pages in docs/ that have `console run` transcripts. */
export function transcriptPages(): string[] {
  return readdirSync(DOCS_DIR)
    .filter((n) => n.endsWith('.md') && transcriptBlocks(readFileSync(join(DOCS_DIR, n), 'utf8')).length > 0)
    .map((n) => join(DOCS_DIR, n));
}

/** Runs a page's transcripts, in order, after SANDBOX_PRELUDE; returns the page with fresh outputs and any problems. */
export async function runTranscripts(
  page: string,
): Promise<{ results: BlockResult[]; problems: string[]; rewritten: string }> {
  const markdown = readFileSync(page, 'utf8');
  const blocks = transcriptBlocks(markdown);
  const w = await runWalkthrough({ blocks, prelude: SANDBOX_PRELUDE, keep: true });
  const secrets = secretsOf(w);
  rmSync(w.root, { recursive: true, force: true });
  const problems = w.results.flatMap(transcriptProblems);
  const byLine = new Map(w.results.map((r) => [r.block.line, r]));
  const lines = markdown.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]!);
    const r = byLine.get(i + 1);
    if (!r) continue;
    for (const c of r.commands ?? []) {
      out.push(`$ ${c.command}`);
      const text = displayed(c.output, w, secrets, '~/work');
      if (text !== '') out.push(text);
    }
    while (i + 1 < lines.length && lines[i + 1] !== '```') i++;
  }
  return { results: w.results, problems, rewritten: out.join('\n') };
}

function secretsOf(w: Walkthrough): Record<string, string> {
  const secrets: Record<string, string> = {};
  const config = join(w.env.LEADCTL_CONFIG_DIR!, 'config.json');
  if (existsSync(config)) {
    const data = JSON.parse(readFileSync(config, 'utf8')) as {
      profiles?: Record<string, { client_id?: string; client_secret?: string }>;
    };
    for (const p of Object.values(data.profiles ?? {})) {
      if (p.client_secret) secrets[p.client_secret] = '<client secret>';
      if (p.client_id) secrets[p.client_id] = '<client id>';
    }
  }
  for (const envFile of [join(w.workDir, 'sandbox.env'), join(w.root, 'state', 'sandbox.env')]) {
    if (!existsSync(envFile)) continue;
    for (const m of readFileSync(envFile, 'utf8').matchAll(/(?:LEADCTL_API_KEY=|api_key )'?([A-Za-z0-9]+)/g)) {
      secrets[m[1]!] = /LEADCTL_API_KEY/.test(m[0]) ? '<price-reject campaign api key>' : '<campaign api key>';
    }
  }
  return secrets;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const write = process.argv.includes('--write');
  const w = await runWalkthrough({
    keep: true,
    onBlock: (r) =>
      process.stdout.write(`--- README.md line ${r.block.line}: exit ${r.exitCode ?? r.signal}\n${r.output}`),
  });
  const secrets = secretsOf(w);
  rmSync(w.root, { recursive: true, force: true });
  const failed = w.results.find((r) => r.exitCode !== r.block.expectExit);
  if (failed) {
    process.stderr.write(
      `README.md line ${failed.block.line}: the block exited ${failed.exitCode ?? failed.signal}, the README expects ${failed.block.expectExit}\n`,
    );
    process.exitCode = 1;
  } else if (write) {
    const outputs = new Map(w.results.map((r) => [r.block.line, displayed(r.output, w, secrets)]));
    writeFileSync(README, withOutputs(readFileSync(README, 'utf8'), outputs));
    process.stdout.write('README.md: walkthrough outputs written\n');
  }
  for (const page of transcriptPages()) {
    const { problems, rewritten } = await runTranscripts(page);
    const name = page.slice(ROOT.length + 1);
    if (problems.length > 0) {
      process.stderr.write(`${name}:\n${problems.join('\n')}\n`);
      process.exitCode = 1;
    } else if (write) {
      writeFileSync(page, rewritten);
      process.stdout.write(`${name}: transcripts rewritten from a run\n`);
    } else process.stdout.write(`${name}: transcripts ran\n`);
  }
}
