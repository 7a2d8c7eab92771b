#!/usr/bin/env node
/**
 * The push benchmark's "sandbox alone" row by itself, for work on the sandbox's speed:
 * `node_modules/.bin/node test/bench/sandbox-ceiling.mjs [--customers 100000] [--cpu-prof] [--bin PATH] [--file] [--store]`
 * (after `npm run build`). It counts the customers, loans and payments the push benchmark
 * generates (fixtures/lms/generate.mjs, seed 1, 10 payments a customer), posts ready-made bodies
 * of those numbers 4 at a time to a sandbox in its own process, and prints the time and rate.
 * With --cpu-prof the sandbox writes a CPU profile into the current folder. With --file the sandbox
 * keeps its store in a file (a fresh temp folder, removed after), as `leadctl sandbox start` does by
 * default, instead of in memory. With --store the bodies skip HTTP, parsing and checks: the build's
 * store (dist/sandbox/store) stores them in this process and only storeBatch's CPU time is printed,
 * which a shared machine disturbs less than a whole sandbox's.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { generateCustomers } from '../../fixtures/lms/generate.mjs';
import { sandboxBodies, sandboxCeiling } from './push.bench.mjs';

const args = process.argv.slice(2);
const customers = args.includes('--customers') ? Number(args[args.indexOf('--customers') + 1]) : 100_000;
const nodeFlags = args.includes('--cpu-prof') ? ['--cpu-prof'] : [];
const storeDir = args.includes('--file') ? mkdtempSync(join(tmpdir(), 'sandbox-ceiling-')) : undefined;
const storeArgs = storeDir === undefined ? ['--memory'] : ['--data-dir', join(storeDir, 'store')];
// --bin: another build's bin/leadctl.js, to measure before and after a change side by side.
const BIN = args.includes('--bin')
  ? args[args.indexOf('--bin') + 1]
  : fileURLToPath(new URL('../../bin/leadctl.js', import.meta.url));

const counts = { customers: 0, loans: 0, payments: 0 };
for (const customer of generateCustomers({ customers, seed: 1, paymentsPerCustomer: 10 })) {
  counts.customers++;
  counts.loans += customer.loans.length;
  for (const loan of customer.loans) counts.payments += loan.payments.length;
}

if (args.includes('--store')) {
  const dist = new URL('../dist/sandbox/store/', pathToFileURL(BIN));
  const { openDatabase } = await import(new URL('database.js', dist).href);
  const { LoanPerformanceStore } = await import(new URL('loan-performance.js', dist).href);
  const { ACCOUNT_ID } = await import(new URL('seed.js', dist).href);
  const db = openDatabase(storeDir === undefined ? undefined : join(storeDir, 'store'));
  let cpu = 0;
  let sent = 0;
  try {
    db.prepare('INSERT INTO accounts (id, name) VALUES (?, ?)').run(ACCOUNT_ID, 'bench');
    const store = new LoanPerformanceStore(db, ACCOUNT_ID);
    for (const body of sandboxBodies(counts.customers, counts.loans, counts.payments, 'S')) {
      const { customers: batch } = JSON.parse(body);
      for (const customer of batch) for (const loan of customer.loans) sent += loan.payments.length;
      const start = process.cpuUsage();
      store.storeBatch(batch, '2026-11-26T00:00:00Z');
      const used = process.cpuUsage(start);
      cpu += (used.user + used.system) / 1e6;
    }
    const stored = db.prepare('SELECT count(*) FROM payments').pluck().get();
    if (stored !== sent) throw new Error(`stored ${stored} payments of ${sent}`);
  } finally {
    db.close();
    if (storeDir !== undefined) rmSync(storeDir, { recursive: true, force: true });
  }
  process.stdout.write(
    `store alone${storeDir === undefined ? '' : ' (file store)'}: ${sent.toLocaleString('en-US')} payments: storeBatch CPU ${cpu.toFixed(2)} s (${((cpu / sent) * 1e6).toFixed(2)} µs a payment)\n`,
  );
  process.exit(0);
}

function startSandbox(extraArgs = []) {
  const env = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) env[k] = v;
  const child = spawn(
    process.execPath,
    [...nodeFlags, BIN, 'sandbox', 'start', '--port', '0', ...storeArgs, '--output', 'json', ...extraArgs],
    { env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`sandbox exited (${code}) before it was ready`)));
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl < 0) return;
      const line = JSON.parse(out.slice(0, nl));
      resolve({
        pid: child.pid,
        baseUrl: line.base_url,
        clientId: line.client_id,
        clientSecret: line.client_secret,
        adminToken: line.admin_token,
        async stop() {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
          return { peakRssMb: null };
        },
      });
    });
  });
}

/** CPU seconds (user + system) a process has used so far, on Linux; null elsewhere. */
function cpuSeconds(pid) {
  const file = `/proc/${pid}/stat`;
  if (!existsSync(file)) return null;
  const fields = readFileSync(file, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

// The sandbox's CPU time is steadier than wall time on a machine shared with other work.
let cpuAtStart = null;
let cpu = null;
const result = await sandboxCeiling(async (extraArgs) => {
  const sandbox = await startSandbox(extraArgs);
  cpuAtStart = cpuSeconds(sandbox.pid);
  return {
    ...sandbox,
    async stop() {
      const end = cpuSeconds(sandbox.pid);
      if (end !== null && cpuAtStart !== null) cpu = end - cpuAtStart;
      return sandbox.stop();
    },
  };
}, counts).finally(() => {
  if (storeDir !== undefined) rmSync(storeDir, { recursive: true, force: true });
});
const rate = (n) => Math.round(n / result.seconds).toLocaleString('en-US');
process.stdout.write(
  `sandbox alone${storeDir === undefined ? '' : ' (file store)'}: ${counts.customers.toLocaleString('en-US')} customers, ${counts.loans.toLocaleString('en-US')} loans, ` +
    `${counts.payments.toLocaleString('en-US')} payments in ${result.requests} bodies: ${result.seconds.toFixed(2)} s ` +
    `(${rate(counts.payments)} payments/s, ${((result.seconds / counts.payments) * 1e6).toFixed(2)} µs a payment)` +
    (cpu === null
      ? ''
      : `; sandbox CPU ${cpu.toFixed(2)} s (${((cpu / counts.payments) * 1e6).toFixed(2)} µs a payment)`) +
    '\n',
);
