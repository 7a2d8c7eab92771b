// fast-check for mutation runs: the same library, each property run at most MUTATION_RUNS times.
// A mutant is killed by the first counterexample, which small runs find; the suite's own numbers
// (up to 1,500 generated files) would make a run over four folders take a day on two cores.
import * as real from '../../node_modules/fast-check/lib/fast-check.js';

const cap = Number(process.env.MUTATION_RUNS ?? 100);
const fc = (real as unknown as { default?: typeof real }).default ?? real;

type AssertArgs = Parameters<typeof fc.assert>;
function assert(property: AssertArgs[0], params?: AssertArgs[1]) {
  const numRuns = Math.min(params?.numRuns ?? cap, cap);
  return fc.assert(property, { ...params, numRuns } as AssertArgs[1]);
}

export default { ...fc, assert };
