import { readFileSync } from 'node:fs';

/** leadctl's version, from the package.json beside dist/ (read once, when first asked). */
let cached: string | undefined;
export function packageVersion(): string {
  cached ??= (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string })
    .version;
  return cached;
}
