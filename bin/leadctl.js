#!/usr/bin/env node
// This file must parse on any Node.js (no await at top level, no ?? or ?.), so that an
// unsupported runtime gets one clear line and exit 2 instead of a syntax error or a crash.
var running = process.versions.node;
var parts = running.split('.');
var major = Number(parts[0]);
var minor = Number(parts[1]);
var args = process.argv.slice(2);
var help = args.length === 1 && (args[0] === '--help' || args[0] === '-h') && !process.stdout.isTTY;
if (!((major === 22 && minor >= 13) || major >= 24)) {
  process.exitCode = 2;
  import('node:fs').then((fs) => {
    process.stderr.write(
      'leadctl: Node.js ' +
        running +
        ' is not supported; leadctl runs on Node.js 22 (22.13 or later) and 24. ' +
        advice(fs) +
        '\n',
    );
  });
} else if (args.length === 1 && (args[0] === '--version' || args[0] === '-V')) {
  // What scripts and health checks call most: answered here, without loading anything more.
  var pkg = JSON.parse(
    process.getBuiltinModule('fs').readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
  );
  process.stdout.write(pkg.version + '\n');
} else if (help && printBuiltHelp()) {
  // The top-level help, as commander writes it to a pipe (80 columns), written at build time by the
  // same program (scripts/write-help.mjs). On a terminal, whose width varies, commander writes it.
} else {
  import('./start.js');
}

function printBuiltHelp() {
  var text;
  try {
    text = process.getBuiltinModule('fs').readFileSync(new URL('../dist/cli/help.txt', import.meta.url), 'utf8');
  } catch {
    return false;
  }
  process.stdout.write(text);
  return true;
}

/** What to do instead, for the way this copy was installed. */
function advice(fs) {
  var root = new URL('../', import.meta.url);
  var folder = decodeURIComponent(root.pathname).replace(/\/$/, '');
  // The self-contained release: its bin/leadctl runs the Node.js bundled beside it.
  if (fs.existsSync(new URL('node/bin/node', root))) {
    return 'Run ' + folder + '/bin/leadctl, which uses the Node.js bundled with this release.';
  }
  // A clone: npm install put Node.js 24 (the `node` devDependency) in node_modules/.bin, which npx puts first on PATH.
  if (fs.existsSync(new URL('node_modules/.bin/node', root))) {
    return (
      'In its project folder ' +
      folder +
      ', run it as `npx leadctl …`: npx uses the Node.js 24 that npm install put there.'
    );
  }
  return (
    'Make `node` on PATH one of them (https://nodejs.org, or `nvm install 24`), ' +
    'or install the self-contained release, which brings its own Node.js (' +
    folder +
    '/docs/install.md).'
  );
}
