#!/usr/bin/env node
/**
 * Benchmark of `leadctl lists create` on a generated file of one million SSNs (5% invalid,
 * 10% duplicates, half typed with dashes). Prints figures only; asserts nothing.
 *
 *   node test/bench/lists.bench.mjs [--rows N]      (after `npm run build`)
 *
 * Each measurement runs in a fresh child process so its peak memory (maxRSS) is its own:
 *   - baseline: read the file and test each line against an SSN regex (the floor);
 *   - validate-only: `leadctl lists create --validate-only --skip-invalid` through main();
 *   - full upload: the same without --validate-only, to a sandbox in another process.
 */
import { spawn } from 'node:child_process';
import { createReadStream, createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = join(ROOT, 'bin/leadctl.js');
const SELF = fileURLToPath(import.meta.url);

if (process.argv[2] === '--child') {
  await child(process.argv[3], process.argv.slice(4));
} else {
  await parent();
}

async function parent() {
  const rowsArg = process.argv.indexOf('--rows');
  const rows = rowsArg > 0 ? Number(process.argv[rowsArg + 1]) : 1_000_000;
  const dir = mkdtempSync(join(tmpdir(), 'leadctl-bench-lists-'));
  const file = join(dir, 'ssns.csv');
  let sandbox;
  try {
    const generated = await generate(file, rows);
    console.log(`lists bench: ${rows.toLocaleString('en-US')} SSN rows (${generated.invalid.toLocaleString('en-US')} invalid, ${generated.duplicates.toLocaleString('en-US')} duplicates), ${(generated.bytes / 1e6).toFixed(1)} MB`);

    // Two cores shared with other work: the median of three runs of the cheap measurements.
    const baseline = await median(() => measure('baseline', [file]));
    const validate = await median(() => measure('cli', ['lists', 'create', '--name', 'bench', '--type', 'ssn', '--validate-only', '--skip-invalid', '--output', 'json', '--quiet', file]));

    sandbox = await startSandbox();
    const env = { LEADCTL_BASE_URL: sandbox.base_url, LEADCTL_CLIENT_ID: sandbox.client_id, LEADCTL_CLIENT_SECRET: sandbox.client_secret, LEADCTL_CONFIG_DIR: join(dir, 'config') };
    const upload = await measure('cli', ['lists', 'create', '--name', 'bench', '--type', 'ssn', '--skip-invalid', '--output', 'json', '--quiet', file], env);
    const server = await serverOnly(sandbox, file);

    const line = (label, r) =>
      `  ${label.padEnd(34)} ${(rows / r.seconds).toFixed(0).padStart(10)} rows/s  ${r.seconds.toFixed(2).padStart(6)} s  peak RSS ${(r.maxRssKb / 1024).toFixed(0).padStart(4)} MiB`;
    console.log(line('read + regex (baseline)', baseline));
    console.log(line('lists create --validate-only', validate));
    console.log(line('lists create (upload to sandbox)', upload));
    console.log(`  ratio validate-only / baseline: ${(baseline.seconds / validate.seconds).toFixed(2)}x (goal >= 0.25x)`);
    console.log(`  ratio upload / baseline:        ${(baseline.seconds / upload.seconds).toFixed(2)}x`);
    console.log(`  upload: ${upload.summary?.uploaded?.toLocaleString('en-US')} values sent; upload phase ${(upload.seconds - validate.seconds).toFixed(2)} s beyond validate-only (the sandbox parses and stores the body)`);
    console.log(`  the sandbox alone, same ${server.items.toLocaleString('en-US')} items in one POST from this process: ${server.seconds.toFixed(2)} s (HTTP ${server.status}) — the ceiling of a full upload`);
    if (validate.summary) {
      const s = validate.summary;
      console.log(`  summary: read ${s.rows_read}, valid ${s.valid}, normalised ${s.normalised}, duplicates ${s.duplicates}, rejected ${s.rejected}, distinct ${s.distinct}`);
    }
  } finally {
    if (sandbox) {
      sandbox.process.kill('SIGTERM');
      await once(sandbox.process, 'exit');
    }
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Times the sandbox on the same distinct valid values, posted without leadctl. */
async function serverOnly(sandbox, file) {
  const { readFileSync } = await import('node:fs');
  const valid = /^(?!000|666|9)\d{3}(?!00)\d{2}(?!0000)\d{4}$/;
  const items = [...new Set(readFileSync(file, 'utf8').split('\n').map((l) => l.replace(/-/g, '')).filter((v) => valid.test(v)))];
  const token = await fetch(`${sandbox.base_url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: sandbox.client_id, client_secret: sandbox.client_secret }),
  }).then((r) => r.json());
  const body = JSON.stringify({ name: 'bench direct', type: 'Social Security Numbers', list: items });
  const started = performance.now();
  const res = await fetch(`${sandbox.base_url}/api/v1/lead-management/lists`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token.access_token}`, 'content-type': 'application/json', accept: 'application/json' },
    body,
  });
  await res.arrayBuffer();
  return { seconds: (performance.now() - started) / 1000, status: res.status, items: items.length };
}

/** Deterministic data: a linear congruential generator, so runs compare. */
async function generate(file, rows) {
  let seed = 42;
  const random = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return seed / 4294967296;
  };
  const validSsn = () => {
    const area = 1 + Math.floor(random() * 665); // 001-665: never 000, 666 or 9xx
    const group = 1 + Math.floor(random() * 99);
    const serial = 1 + Math.floor(random() * 9999);
    return String(area).padStart(3, '0') + String(group).padStart(2, '0') + String(serial).padStart(4, '0');
  };
  const invalidSsn = () => {
    const kind = Math.floor(random() * 4);
    if (kind === 0) return '000' + validSsn().slice(3);
    if (kind === 1) return '9' + validSsn().slice(1);
    if (kind === 2) return validSsn().slice(1); // 8 digits
    return validSsn().slice(0, 5) + 'X' + validSsn().slice(6);
  };
  const format = (ssn) => (random() < 0.5 ? `${ssn.slice(0, 3)}-${ssn.slice(3, 5)}-${ssn.slice(5)}` : ssn);
  const out = createWriteStream(file);
  const seen = [];
  let invalid = 0;
  let duplicates = 0;
  let bytes = 0;
  let chunk = 'SSN\n';
  for (let i = 0; i < rows; i++) {
    const r = random();
    let value;
    if (r < 0.05) {
      value = invalidSsn();
      invalid++;
    } else if (r < 0.15 && seen.length > 0) {
      value = seen[Math.floor(random() * seen.length)];
      duplicates++;
    } else {
      value = validSsn();
      if (seen.length < 200_000) seen.push(value);
    }
    chunk += format(value) + '\n';
    if (chunk.length > 1 << 16) {
      bytes += chunk.length;
      if (!out.write(chunk)) await once(out, 'drain');
      chunk = '';
    }
  }
  bytes += chunk.length;
  out.end(chunk);
  await once(out, 'finish');
  // Random picks can collide with earlier valid values too; the CLI's own count is the truth.
  return { invalid, duplicates, bytes };
}

async function median(fn, runs = 3) {
  const results = [];
  for (let i = 0; i < runs; i++) results.push(await fn());
  results.sort((a, b) => a.seconds - b.seconds);
  return results[Math.floor(runs / 2)];
}

function measure(mode, args, env = {}) {
  return new Promise((resolve, reject) => {
    const childEnv = { ...process.env, NO_COLOR: '1', ...env };
    const proc = spawn(process.execPath, [SELF, '--child', mode, ...args], { env: childEnv, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stdout.setEncoding('utf8').on('data', (d) => (out += d));
    // The skipped rows' table goes to stderr: keep only its end, for failures.
    proc.stderr.setEncoding('utf8').on('data', (d) => (err = (err + d).slice(-2000)));
    proc.on('error', reject);
    proc.on('exit', (code) => {
      const last = out.trim().split('\n').pop() ?? '';
      try {
        const result = JSON.parse(last);
        if (result.error) reject(new Error(`${mode} failed: ${result.error}\n${err}`));
        else resolve(result);
      } catch {
        reject(new Error(`${mode} exited ${code} without a result: ${out.slice(-500)}`));
      }
    });
  });
}

async function child(mode, args) {
  const started = performance.now();
  if (mode === 'baseline') {
    const re = /^\d{3}-?\d{2}-?\d{4}$/;
    let carry = '';
    let matched = 0;
    for await (const chunk of createReadStream(args[0], { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
      const lines = (carry + chunk).split('\n');
      carry = lines.pop();
      for (const line of lines) if (re.test(line)) matched++;
    }
    if (carry && re.test(carry)) matched++;
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(JSON.stringify({ seconds, matched, maxRssKb: process.resourceUsage().maxRSS }) + '\n');
    return;
  }
  const { main } = await import(pathToFileURL(join(ROOT, 'dist/cli/main.js')).href);
  const { PassThrough } = await import('node:stream');
  const captured = new PassThrough();
  let text = '';
  captured.setEncoding('utf8').on('data', (d) => (text += d));
  const io = {
    stdin: process.stdin,
    stdout: Object.assign(captured, { isTTY: false }),
    stderr: process.stderr,
    env: process.env,
    cwd: process.cwd(),
    now: () => new Date(),
    onSignal: () => () => {},
  };
  const begin = performance.now();
  const code = await main(args, io);
  const seconds = (performance.now() - begin) / 1000;
  let summary;
  try {
    summary = JSON.parse(text);
  } catch {
    summary = undefined;
  }
  const result = code === 0 || code === 4 ? { seconds, code, summary, maxRssKb: process.resourceUsage().maxRSS } : { error: `exit ${code}: ${text.slice(0, 300)}` };
  process.stdout.write(JSON.stringify(result) + '\n');
  process.exit(0);
}

function startSandbox() {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, [BIN, 'sandbox', 'start', '--port', '0', '--memory', '--output', 'json'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.on('error', reject);
    proc.on('exit', (code) => reject(new Error(`sandbox exited (${code}) before it was ready`)));
    proc.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) resolve({ ...JSON.parse(out.slice(0, nl)), process: proc });
    });
  });
}
