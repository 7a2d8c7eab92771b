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
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const README = join(ROOT, 'README.md');
/** Where the README tells the reader to work; temporary paths are shown as these. */
const SHOWN_WORK_DIR = '~/leadctl-first-hour';
const BLOCK_TIMEOUT_MS = 120_000;

export interface Block {
  /** 1-based line of the opening fence in README.md. */
  line: number;
  code: string;
  expectExit: number;
}

export interface BlockResult {
  block: Block;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  output: string;
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
set -eo pipefail
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
  writeFileSync(script, PROLOGUE + block.code + '\n');
  return new Promise((resolveBlock, reject) => {
    // Its own process group: whatever the block leaves running in the background is found and stopped at the end.
    const child = spawn('bash', [script, join(root, 'state')], { env, cwd: root, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) groups.push(child.pid);
    let output = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => (output += d));
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (output += d));
    const timer = setTimeout(() => stopGroup(child.pid), BLOCK_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (exitCode, signal) => {
      clearTimeout(timer);
      // A background process that kept the pipes open must not hold the walkthrough up.
      const done = () => resolveBlock({ block, exitCode, signal, output });
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

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops every process group the blocks started: SIGTERM, then SIGKILL after 10 s. */
async function stopAll(groups: number[]): Promise<void> {
  for (const g of groups) stopGroup(g);
  const deadline = Date.now() + 10_000;
  while (groups.some(groupAlive) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  for (const g of groups) if (groupAlive(g)) stopGroup(g, 'SIGKILL');
}

export async function runWalkthrough(options: { readme?: string; onBlock?: (r: BlockResult) => void; keep?: boolean } = {}): Promise<Walkthrough> {
  const blocks = walkthroughBlocks(readFileSync(options.readme ?? README, 'utf8'));
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
    for (const block of blocks) {
      const result = await runBlock(block, root, env, groups);
      results.push(result);
      options.onBlock?.(result);
      if (result.exitCode !== block.expectExit) break;
    }
  } finally {
    await stopAll(groups);
    if (!options.keep) rmSync(root, { recursive: true, force: true });
  }
  return { root, workDir, env, results };
}

/** What the reader would see, without this run's secrets, port and temporary folders. */
export function displayed(output: string, w: Walkthrough, secrets: Record<string, string>): string {
  let text = output;
  for (const [value, placeholder] of Object.entries(secrets)) if (value) text = text.split(value).join(placeholder);
  return text
    .split(w.workDir)
    .join(SHOWN_WORK_DIR)
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

function secretsOf(w: Walkthrough): Record<string, string> {
  const secrets: Record<string, string> = {};
  const config = join(w.env.LEADCTL_CONFIG_DIR!, 'config.json');
  if (existsSync(config)) {
    const data = JSON.parse(readFileSync(config, 'utf8')) as { profiles?: Record<string, { client_id?: string; client_secret?: string }> };
    for (const p of Object.values(data.profiles ?? {})) {
      if (p.client_secret) secrets[p.client_secret] = '<client secret>';
      if (p.client_id) secrets[p.client_id] = '<client id>';
    }
  }
  const envFile = join(w.workDir, 'sandbox.env');
  if (existsSync(envFile)) {
    for (const m of readFileSync(envFile, 'utf8').matchAll(/(?:LEADCTL_API_KEY=|api_key )'?([A-Za-z0-9]+)/g)) {
      secrets[m[1]!] = /LEADCTL_API_KEY/.test(m[0]) ? '<price-reject campaign api key>' : '<campaign api key>';
    }
  }
  return secrets;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  const write = process.argv.includes('--write');
  const w = await runWalkthrough({ keep: true, onBlock: (r) => process.stdout.write(`--- README.md line ${r.block.line}: exit ${r.exitCode ?? r.signal}\n${r.output}`) });
  const secrets = secretsOf(w);
  rmSync(w.root, { recursive: true, force: true });
  const failed = w.results.find((r) => r.exitCode !== r.block.expectExit);
  if (failed) {
    process.stderr.write(`README.md line ${failed.block.line}: the block exited ${failed.exitCode ?? failed.signal}, the README expects ${failed.block.expectExit}\n`);
    process.exitCode = 1;
  } else if (write) {
    const outputs = new Map(w.results.map((r) => [r.block.line, displayed(r.output, w, secrets)]));
    writeFileSync(README, withOutputs(readFileSync(README, 'utf8'), outputs));
    process.stdout.write('README.md: walkthrough outputs written\n');
  }
}
