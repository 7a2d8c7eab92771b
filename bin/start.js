// Loaded by bin/leadctl.js once the runtime is known to be supported.
const args = process.argv.slice(2);

// --version and --help (to a pipe) are answered by bin/leadctl.js without loading this file.
// Node's own on-disk cache of compiled code (in the temp dir; NODE_COMPILE_CACHE moves it,
// NODE_DISABLE_COMPILE_CACHE=1 turns it off): every run after the first skips compiling
// commander, the command tree and the modules a command loads.
const { default: module } = await import('node:module');
module.enableCompileCache?.();
// The sandbox is a server for rehearsals and tests, not a job on a small VM: it keeps V8's defaults.
if (args[0] !== 'sandbox') await boundHeap(16);
// A file size limit (`ulimit -f`) would kill the process mid-write, leaving a partial file of
// personal data and no message; caught, the write fails with EFBIG, which leadctl reports (exit 2)
// and cleans up after. The signal is caught here and told to no one: conf's when-exit and ora's
// signal-exit listen for it too, and re-raise it to end the process "as the signal would have".
process.on('SIGXFSZ', () => {});
const emit = process.emit;
process.emit = function (event, ...rest) {
  return event === 'SIGXFSZ' ? true : emit.call(this, event, ...rest);
};
// `leadctl … | head`: the reader went away, which is not an error of ours. Stop quietly, as Unix tools do.
process.stdout.on('error', (err) => {
  if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw err;
});
const { main } = await import('../dist/leadctl.js');
const code = await main(args);
// Written now, while SIGXFSZ is caught: at exit, past a file size limit, it would end the process by that signal.
module.flushCompileCache?.();
process.exitCode = code;
// A forgotten socket or timer must never keep a cron job hanging after its work is done.
setTimeout(() => process.exit(code), 1500).unref();

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
async function boundHeap(youngMb) {
  const [{ default: v8 }, { PerformanceObserver }] = await Promise.all([import('node:v8'), import('node:perf_hooks')]);
  v8.setFlagsFromString('--heap-growing-percent=100');
  const limit = youngMb * 1024 * 1024;
  const atLimit = () =>
    (v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0) >= limit;
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
