// Lists what a Stryker run left alive, per file, from its JSON report:
// `node_modules/.bin/node test/mutation/survivors.mjs [reports/mutation/mutation.json]`.
// Prints each file's score (killed + timeout over valid mutants) and, per survivor or uncovered
// mutant: line, mutator, status and the replacement (first line, shortened).
import { readFileSync } from 'node:fs';

const report = JSON.parse(readFileSync(process.argv[2] ?? 'reports/mutation/mutation.json', 'utf8'));
const alive = new Set(['Survived', 'NoCoverage']);
const valid = new Set(['Killed', 'Timeout', 'Survived', 'NoCoverage']);
const totals = { killed: 0, survived: 0, noCoverage: 0 };
for (const [file, { mutants }] of Object.entries(report.files)) {
  const count = (statuses) => mutants.filter((m) => statuses.includes(m.status)).length;
  const killed = count(['Killed', 'Timeout']);
  const survived = count(['Survived']);
  const noCoverage = count(['NoCoverage']);
  const all = mutants.filter((m) => valid.has(m.status)).length;
  totals.killed += killed;
  totals.survived += survived;
  totals.noCoverage += noCoverage;
  const score = all === 0 ? 'n/a' : `${((100 * killed) / all).toFixed(1)}%`;
  console.log(`${file}: killed+timeout ${killed}, survived ${survived}, no coverage ${noCoverage}, score ${score}`);
  for (const m of mutants
    .filter((m) => alive.has(m.status))
    .sort((a, b) => a.location.start.line - b.location.start.line)) {
    const text = (m.replacement ?? '').split('\n')[0].slice(0, 90);
    const tag = m.status === 'NoCoverage' ? ' [no coverage]' : '';
    console.log(`  ${m.location.start.line}:${m.location.start.column} ${m.mutatorName}${tag}: ${text}`);
  }
}
const all = totals.killed + totals.survived + totals.noCoverage;
if (all > 0)
  console.log(
    `total: killed+timeout ${totals.killed}, survived ${totals.survived}, no coverage ${totals.noCoverage}, score ${((100 * totals.killed) / all).toFixed(1)}%`,
  );
