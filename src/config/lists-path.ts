import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ListsPathMemory } from '../api/client.js';
import { writeFileSafely } from '../io/safe-file.js';

/**
 * The lists path that worked, remembered per profile and base URL in the state folder
 * (`lists-paths.json`), so that a deployment serving lists under the other prefix is found once,
 * not probed on every run. Losing the file costs one probe; nothing else depends on it.
 */

const FILE = 'lists-paths.json';

function readAll(dir: string): Record<string, string> {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, FILE), 'utf8')) as unknown;
    return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, string>) : {};
  } catch {
    return {};
  }
}

export function listsPathMemory(dir: string, profile: string, baseUrl: string): ListsPathMemory {
  const key = `${profile} ${baseUrl.replace(/\/+$/, '')}`;
  return {
    get() {
      const value = readAll(dir)[key];
      return typeof value === 'string' && value.startsWith('/') ? value : undefined;
    },
    set(path) {
      try {
        mkdirSync(dir, { recursive: true, mode: 0o700 });
        const all = { ...readAll(dir), [key]: path };
        // Whole or not at all, so a run reading at the same moment never sees half a file.
        writeFileSafely(join(dir, FILE), JSON.stringify(all, null, 2) + '\n', { sync: false });
      } catch {
        // A read-only state folder only costs a probe next time.
      }
    },
  };
}
