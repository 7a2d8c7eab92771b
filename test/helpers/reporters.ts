import { configDefaults, type ViteUserConfig } from 'vitest/config';

type Reporters = NonNullable<ViteUserConfig['test']>['reporters'];

/**
 * .ci/run sets LEADCTL_TEST_JSON: the results also go to that JSON file, whose failures it prints
 * last (a CI log is read from its end, far from where the default reporter tells them). Unset,
 * vitest chooses as it always does.
 */
export function reporters(): Reporters {
  const json = process.env.LEADCTL_TEST_JSON;
  return json ? [...configDefaults.reporters, ['json', { outputFile: json }]] : undefined;
}
