import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// This file sits one folder below the package root in src/ and in dist/, and so does every
// bundled chunk of dist/ (scripts/bundle.mjs), where every module shares its chunk's URL:
// files of the installation are found from here, never from a module's own place.
const ROOT = new URL('../', import.meta.url);

/** A file or folder of this installation (bin/, fixtures/, package.json), as a path. */
export function packagePath(relative: string): string {
  return fileURLToPath(new URL(relative, ROOT));
}

/** leadctl's version, from the package.json beside dist/ (read once, when first asked). */
let cached: string | undefined;
export function packageVersion(): string {
  cached ??= (JSON.parse(readFileSync(packagePath('package.json'), 'utf8')) as { version: string }).version;
  return cached;
}
