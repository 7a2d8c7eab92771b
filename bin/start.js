// Loaded by bin/leadctl.js once the runtime is known to be supported.
import module from 'node:module';
import { readFileSync } from 'node:fs';
import { PerformanceObserver } from 'node:perf_hooks';
import v8 from 'node:v8';

// Node's own on-disk cache of compiled code (in the temp dir; NODE_COMPILE_CACHE moves it,
// NODE_DISABLE_COMPILE_CACHE=1 turns it off): every run after the first skips compiling
// commander, the command tree and the modules a command loads.
module.enableCompileCache?.();

const args = process.argv.slice(2);

// `leadctl --version` is what scripts and health checks call most: answer it without
// loading the CLI (commander and the command tree cost more than Node's own start-up).
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(pkg.version + '\n');
} else if (args.length === 1 && (args[0] === '--help' || args[0] === '-h') && !process.stdout.isTTY && helpText() !== undefined) {
  // The top-level help, as commander writes it to a pipe (80 columns), is written at build time by
  // the same program (scripts/write-help.mjs): printing it needs no CLI at all. On a terminal, whose
  // width varies, commander writes it.
  process.stdout.write(helpText());
} else {
  // The sandbox is a server for rehearsals and tests, not a job on a small VM: it keeps V8's defaults.
  if (args[0] !== 'sandbox') boundHeap(16);
  // `leadctl … | head`: the reader went away, which is not an error of ours. Stop quietly, as Unix tools do.
  process.stdout.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
  const { main } = await import('../dist/cli/main.js');
  const code = await main(args);
  process.exitCode = code;
  // A forgotten socket or timer must never keep a cron job hanging after its work is done.
  setTimeout(() => process.exit(code), 1500).unref();
}

/**
 * A push of millions of rows allocates short-lived objects by the gigabyte, and on a machine with
 * plenty of memory V8 sizes its heap for speed, not for a nightly job on a small VM: a young
 * generation of up to 2 x 64 MB, kept once grown, and an old generation let grow to several times
 * what is live before it is collected. Measured on the push benchmark, that is 200-300 MB more
 * resident memory for a few percent of speed (16 MB measured no slower than 32 MB for the
 * two-file push, and 30 MB smaller). Two of V8's flags are read at each collection, so
 * they can be set now: the young generation stops growing at `youngMb` in all, and the old one may
 * grow by as much as is live before the next full collection (the default is up to four times it;
 * half would save another 30-40 MB for half again the CPU time of a push).
 */
function boundHeap(youngMb) {
  v8.setFlagsFromString('--heap-growing-percent=100');
  const limit = youngMb * 1024 * 1024;
  const atLimit = () => (v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) >= limit;
  if (atLimit()) {
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    return;
  }
  const observer = new PerformanceObserver(() => {
    if (!atLimit()) return;
    v8.setFlagsFromString('--semi-space-growth-factor=1');
    observer.disconnect();
  });
  observer.observe({ entryTypes: ['gc'] });
}

/** dist/cli/help.txt, when the build wrote it for this very version of the CLI. */
function helpText() {
  if (helpText.cached === undefined) {
    try {
      helpText.cached = readFileSync(new URL('../dist/cli/help.txt', import.meta.url), 'utf8');
    } catch {
      helpText.cached = null;
    }
  }
  return helpText.cached ?? undefined;
}
