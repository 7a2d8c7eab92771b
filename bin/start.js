// Loaded by bin/leadctl.js once the runtime is known to be supported.
const args = process.argv.slice(2);

// `leadctl --version` is what scripts and health checks call most: answer it without
// loading the CLI (commander and the command tree cost more than Node's own start-up).
if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  const { readFileSync } = await import('node:fs');
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
  process.stdout.write(pkg.version + '\n');
} else {
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
