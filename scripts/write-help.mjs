// Run by `npm run build` after tsc: writes dist/cli/help.txt, the top-level `leadctl --help` as
// commander prints it to a pipe (80 columns), so that bin/start.js can print it without loading
// the CLI. Written by the built CLI itself, so it cannot differ from what commander would print.
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const target = fileURLToPath(new URL('../dist/cli/help.txt', import.meta.url));
const bin = fileURLToPath(new URL('../bin/leadctl.js', import.meta.url));
rmSync(target, { force: true }); // without it, the CLI writes the help itself
const env = { ...process.env };
for (const key of Object.keys(env)) if (key.startsWith('LEADCTL_')) delete env[key];
const text = execFileSync(process.execPath, [bin, '--help'], {
  env,
  encoding: 'utf8',
  stdio: ['ignore', 'pipe', 'inherit'],
});
writeFileSync(target, text);
