#!/usr/bin/env node
/**
 * `npm run bench [-- --quick] [-- --json] [-- --only NAME] [-- --scale]`: generates its data in a temp dir,
 * measures everything in this one run and prints one table. Figures only: nothing here
 * fails on a timing. The module contract is in test/bench/README.md.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/leadctl.js');
const BENCH_DIR = fileURLToPath(new URL('./', import.meta.url));
// Modules named here run first, in this order; any other *.bench.mjs follows alphabetically.
const MODULE_ORDER = ['lists.bench.mjs', 'push.bench.mjs'];

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const json = args.includes('--json');
const scale = args.includes('--scale');
// --scale: the push module's scaling rows alone (two-file push at 1M, 2M and 5M payments).
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : scale ? 'push' : undefined;

const log = (message) => process.stderr.write(`bench: ${message}\n`);

if (!existsSync(join(ROOT, 'dist/cli/main.js'))) {
  log('dist/ is missing: run `npm run build` first (npm run bench does it for you)');
  process.exit(2);
}

const root = mkdtempSync(join(tmpdir(), 'leadctl-bench-'));
// Preloaded into every measured node process: writes its peak RSS (KiB, from getrusage) when it exits.
// libuv reports maxRSS in KiB on every platform, so no /proc or /usr/bin/time is needed.
const RSS_HOOK = join(root, 'peak-rss.cjs');
writeFileSync(
  RSS_HOOK,
  `'use strict';
const file = process.env.LEADCTL_BENCH_RSS_FILE;
if (file) {
  delete process.env.LEADCTL_BENCH_RSS_FILE; // grandchildren must not overwrite it
  process.on('exit', () => {
    const u = process.resourceUsage();
    try { require('node:fs').writeFileSync(file, u.maxRSS + ' ' + (u.userCPUTime + u.systemCPUTime)); } catch {}
  });
}
`,
);

let rssSeq = 0;
/**
 * Runs `node ...nodeArgs` with the peak-RSS hook and returns its exit code, wall time,
 * peak RSS and captured output. Never throws on a non-zero exit: the caller decides.
 */
function runNode(nodeArgs, options = {}) {
  const rssFile = join(root, `rss-${++rssSeq}`);
  const env = { ...cleanEnv(), NO_COLOR: '1', ...options.env, LEADCTL_BENCH_RSS_FILE: rssFile };
  return new Promise((resolve, reject) => {
    const started = process.hrtime.bigint();
    const child = spawn(process.execPath, ['-r', RSS_HOOK, ...nodeArgs], {
      env,
      cwd: options.cwd ?? ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    const out = [];
    const err = [];
    child.stdout.on('data', (d) => out.push(d));
    child.stderr.on('data', (d) => (options.echoStderr ? process.stderr.write(d) : err.push(d)));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      let peakRssMb = null;
      let cpuSeconds = null;
      try {
        const [rssKib, cpuMicros] = readFileSync(rssFile, 'utf8').split(' ');
        peakRssMb = Number(rssKib) / 1024;
        cpuSeconds = Number(cpuMicros) / 1e6;
        rmSync(rssFile, { force: true });
      } catch {
        // killed before its exit hook ran
      }
      resolve({
        code,
        signal,
        seconds,
        peakRssMb,
        cpuSeconds,
        stdout: Buffer.concat(out).toString('utf8'),
        stderr: Buffer.concat(err).toString('utf8'),
      });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** `leadctl ARGS` through the built binary (bin/leadctl.js), measured like runNode. */
const runCli = (cliArgs, options) => runNode([BIN, ...cliArgs], options);

/** The user's LEADCTL_* settings must never leak into a benchmark (it could reach a real service). */
function cleanEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) env[k] = v;
  return env;
}

/**
 * A sandbox in its own process (in-memory store, ephemeral loopback port). `env` points leadctl
 * at it with a throwaway config dir; `stop()` ends it and resolves to its peak RSS in MB.
 */
function startSandbox(extraArgs = []) {
  const rssFile = join(root, `rss-sandbox-${++rssSeq}`);
  const configDir = join(root, `config-${rssSeq}`);
  const child = spawn(
    process.execPath,
    ['-r', RSS_HOOK, BIN, 'sandbox', 'start', '--port', '0', '--memory', '--output', 'json', ...extraArgs],
    {
      env: { ...cleanEnv(), NO_COLOR: '1', LEADCTL_BENCH_RSS_FILE: rssFile },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  return new Promise((resolve, reject) => {
    const onExit = (code) => reject(new Error(`sandbox exited (${code}) before it was ready: ${stderr.trim()}`));
    child.once('exit', onExit);
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      child.off('exit', onExit);
      const line = JSON.parse(out.slice(0, nl));
      resolve({
        baseUrl: line.base_url,
        clientId: line.client_id,
        clientSecret: line.client_secret,
        adminToken: line.admin_token,
        campaigns: line.campaigns,
        env: {
          LEADCTL_BASE_URL: line.base_url,
          LEADCTL_CLIENT_ID: line.client_id,
          LEADCTL_CLIENT_SECRET: line.client_secret,
          LEADCTL_CONFIG_DIR: configDir,
        },
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
          try {
            return { peakRssMb: Number(readFileSync(rssFile, 'utf8').split(' ')[0]) / 1024 };
          } catch {
            return { peakRssMb: null };
          }
        },
      });
    });
  });
}

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Cold start of the CLI against a bare node, interleaved so background load hits all alike. */
async function coldStart() {
  const runs = quick ? 7 : 21;
  const cases = [
    { name: 'node -e 0', args: ['-e', '0'] },
    { name: 'leadctl --version', args: [BIN, '--version'] },
    { name: 'leadctl --help', args: [BIN, '--help'] },
  ];
  const times = cases.map(() => []);
  const rss = cases.map(() => []);
  await runNode(['-e', '0']); // warm the file cache
  for (let i = 0; i < runs; i++) {
    for (const [k, c] of cases.entries()) {
      const r = await runNode(c.args);
      if (r.code !== 0) throw new Error(`${c.name} exited ${r.code}: ${r.stderr.slice(0, 300)}`);
      times[k].push(r.seconds);
      rss[k].push(r.peakRssMb ?? NaN);
    }
  }
  const base = median(times[0]);
  return cases.map((c, k) => {
    const seconds = median(times[k]);
    return {
      name: `cold start: ${c.name}`,
      rows: null,
      seconds,
      rowsPerSec: null,
      ratio: k === 0 ? 1 : seconds / base,
      ratioTo: 'node -e 0 (time)',
      goal: c.name === 'leadctl --version' ? '<= 1.2x' : c.name === 'leadctl --help' ? '<= 1.3x' : undefined,
      peakRssMb: median(rss[k]),
      note: `median of ${runs} runs`,
    };
  });
}

function benchModules() {
  const files = readdirSync(BENCH_DIR).filter((f) => f.endsWith('.bench.mjs'));
  const rank = (f) => (MODULE_ORDER.includes(f) ? MODULE_ORDER.indexOf(f) : MODULE_ORDER.length);
  return files.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

/** A module that predates the contract may run its whole benchmark at import; check before importing. */
function followsContract(file) {
  const text = readFileSync(join(BENCH_DIR, file), 'utf8');
  return /export\s+(async\s+)?function\s+run\s*\(|export\s*\{[^}]*\brun\b[^}]*\}|export\s+const\s+run\s*=/.test(text);
}

/** Output of modules that predate the contract, printed after the table as they wrote it. */
const scriptOutputs = [];

async function runModule(file) {
  const name = basename(file, '.bench.mjs');
  if (!followsContract(file)) {
    // A standalone script: run it with the row count it understands and show what it prints.
    const rows = quick ? 100_000 : 1_000_000;
    const r = await runNode([join(BENCH_DIR, file), '--rows', String(rows), ...(quick ? ['--quick'] : [])], {
      echoStderr: true,
    });
    scriptOutputs.push({ file, text: r.stdout });
    const note = `${file} exports no run(): ran as a script with --rows ${rows}; its figures are printed below the table`;
    return [{ name, seconds: r.seconds, note: r.code === 0 ? note : `FAILED (exit ${r.code}): ${note}` }];
  }
  const tmpDir = join(root, name);
  mkdirSync(tmpDir, { recursive: true });
  const mod = await import(pathToFileURL(join(BENCH_DIR, file)).href);
  try {
    const rows = await mod.run({
      quick,
      scale,
      tmpDir,
      bin: BIN,
      root: ROOT,
      startSandbox,
      runNode,
      runCli,
      log: (m) => log(`${name}: ${m}`),
    });
    return Array.isArray(rows) ? rows : [];
  } finally {
    rmSync(tmpDir, { recursive: true, force: true });
  }
}

const fmt = {
  int: (n) => (n === null || n === undefined || !Number.isFinite(n) ? '' : Math.round(n).toLocaleString('en-US')),
  seconds: (s) =>
    s === null || s === undefined || !Number.isFinite(s)
      ? ''
      : s < 1
        ? `${(s * 1000).toFixed(1)} ms`
        : `${s.toFixed(2)} s`,
  ratio: (r) => (r === null || r === undefined || !Number.isFinite(r) ? '' : `${r.toFixed(2)}x`),
  mb: (m) => (m === null || m === undefined || !Number.isFinite(m) ? '' : m.toFixed(0)),
};

function table(rows) {
  const headers = ['benchmark', 'rows', 'time', 'rows/s', 'ratio', 'to', 'goal', 'peak RSS MB', 'note'];
  const body = rows.map((r) => [
    r.name ?? '',
    fmt.int(r.rows),
    fmt.seconds(r.seconds),
    fmt.int(r.rowsPerSec),
    fmt.ratio(r.ratio),
    r.ratioTo ?? '',
    r.goal ?? '',
    fmt.mb(r.peakRssMb),
    r.note ?? '',
  ]);
  const right = new Set([1, 2, 3, 4, 7]);
  const widths = headers.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i].length)));
  const line = (cells) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)].join('\n');
}

function machine() {
  const cpu = cpus();
  return `${cpu.length} x ${cpu[0]?.model?.trim() ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(1)} GiB, ${platform()} ${release()}, Node ${process.versions.node}`;
}

const results = [];
let broken = 0;
try {
  log(`${quick ? 'quick run (10x smaller data)' : 'full run'}${scale ? ', --scale' : ''} on ${machine()}`);
  if (!only || only === 'startup') {
    log('cold start...');
    try {
      results.push(...(await coldStart()));
    } catch (error) {
      broken++;
      results.push({ name: 'cold start', note: `FAILED: ${error?.message ?? error}` });
    }
  }
  for (const file of benchModules()) {
    if (only && only !== basename(file, '.bench.mjs')) continue;
    log(`${file}...`);
    try {
      results.push(...(await runModule(file)));
    } catch (error) {
      broken++;
      results.push({ name: basename(file, '.bench.mjs'), note: `FAILED: ${error?.message ?? error}` });
      log(`${file} failed: ${error?.stack ?? error}`);
    }
  }
  const missing = only ? [] : MODULE_ORDER.filter((f) => !existsSync(join(BENCH_DIR, f)));
  for (const f of missing)
    results.push({ name: basename(f, '.bench.mjs'), note: `not run: test/bench/${f} does not exist yet` });
} finally {
  rmSync(root, { recursive: true, force: true });
}

if (json) {
  process.stdout.write(JSON.stringify({ machine: machine(), quick, rows: results }, null, 2) + '\n');
} else {
  process.stdout.write(
    `\nleadctl benchmarks${quick ? ' (--quick: 10x smaller data)' : ''}\nmachine: ${machine()}\n\n${table(results)}\n\n`,
  );
  process.stdout.write(
    "ratio: throughput rows are rows/s divided by the reference's rows/s in the same run (higher is better);\nstart-up rows are time divided by `node -e 0` (lower is better). Figures only: nothing fails on a timing.\n",
  );
  for (const { file, text } of scriptOutputs) process.stdout.write(`\n${file} (standalone script output):\n${text}`);
}
process.exitCode = broken > 0 ? 1 : 0;
