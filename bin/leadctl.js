#!/usr/bin/env node
// This file must parse on any Node.js (no await at top level, no ?? or ?.), so that an
// unsupported runtime gets one clear line and exit 2 instead of a syntax error or a crash.
var running = process.versions.node;
var parts = running.split('.');
var major = Number(parts[0]);
var minor = Number(parts[1]);
if (!((major === 22 && minor >= 13) || major >= 24)) {
  process.stderr.write(
    'leadctl: Node.js ' + running + ' is not supported; leadctl runs on Node.js 22 (22.13 or later) and 24. ' +
      'Install one from https://nodejs.org or with a version manager (nvm install 24), ' +
      'or run leadctl through npx in its project folder, which uses the runtime pinned there.\n'
  );
  process.exitCode = 2;
} else {
  import('./start.js');
}
