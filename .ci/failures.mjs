// Prints the failed tests of vitest's JSON reports (LEADCTL_TEST_JSON), named on the command line:
// .ci/run calls it last, as a CI log is read from its end. Runs on any Node (the machine's own).
import { existsSync, readFileSync } from 'node:fs';

const MAX_LINES = 12;
let failures = 0;
for (const path of process.argv.slice(2)) {
  if (!existsSync(path)) {
    console.log(`${path}: no report (the run ended before vitest wrote it)`);
    failures++;
    continue;
  }
  const report = JSON.parse(readFileSync(path, 'utf8'));
  for (const file of report.testResults ?? []) {
    const name = file.name.replace(`${process.cwd()}/`, '');
    const failed = (file.assertionResults ?? []).filter((a) => a.status === 'failed');
    for (const test of failed) {
      failures++;
      console.log(`FAILED ${name} > ${test.fullName}`);
      for (const message of test.failureMessages ?? []) console.log(indent(message));
    }
    // An error outside any test (a hook, an import) fails the file with no failed test.
    if (file.status === 'failed' && failed.length === 0) {
      failures++;
      console.log(`FAILED ${name}${file.message ? `\n${indent(file.message)}` : ''}`);
    }
  }
  if (report.success === false && failures === 0) console.log(`${path}: vitest failed without a failed test (an unhandled error; see above)`);
}
if (failures === 0) console.log('no failed test in the reports');

function indent(text) {
  // The test's own lines, not vitest's frames.
  const lines = String(text)
    .split('\n')
    .filter((l) => !/^\s+at .*(node_modules|<anonymous>)/.test(l));
  const shown = lines.slice(0, MAX_LINES).map((l) => `    ${l}`);
  if (lines.length > MAX_LINES) shown.push(`    … ${lines.length - MAX_LINES} more lines`);
  return shown.join('\n');
}
