import { mkdir, readFile } from 'node:fs/promises';
import { writeFileSafely } from '../io/safe-file.js';
import { join } from 'node:path';

export const DICTIONARY_MAX_AGE_MS = 24 * 60 * 60 * 1000;

export interface DictionaryCacheOptions {
  /** Directory for cache files (leadctl's cache dir). */
  dir: string;
  /** One cache per profile: two accounts have two dictionaries. */
  profile: string;
  /**
   * Whose dictionary it is (base URL and client id): the same profile pointed at a sandbox, or
   * used with other credentials from the environment, must not reuse another account's copy.
   */
  account: string;
  now: Date;
  maxAgeMs?: number;
}

export interface CachedDictionary<T> {
  entries: T[];
  fetchedAt: Date;
  fromCache: boolean;
}

interface CacheFile<T> {
  account: string;
  fetched_at: string;
  data: T[];
}

export function dictionaryCachePath(dir: string, profile: string): string {
  return join(dir, `dictionary-${profile.replace(/[^A-Za-z0-9._-]/g, '_')}.json`);
}

/**
 * The data dictionary changes rarely and every `leads get`/`export` needs it: it is kept for a
 * day per profile. `refresh` forces a new copy. A cache that cannot be read or written is
 * never an error: the dictionary is simply fetched.
 */
export async function loadDictionary<T>(
  options: DictionaryCacheOptions,
  fetch: () => Promise<T[]>,
  refresh = false,
): Promise<CachedDictionary<T>> {
  const path = dictionaryCachePath(options.dir, options.profile);
  const maxAge = options.maxAgeMs ?? DICTIONARY_MAX_AGE_MS;
  if (!refresh) {
    const cached = await readCache<T>(path);
    if (cached && cached.account === options.account) {
      const fetchedAt = new Date(cached.fetched_at);
      const age = options.now.getTime() - fetchedAt.getTime();
      if (Number.isFinite(age) && age >= 0 && age < maxAge) return { entries: cached.data, fetchedAt, fromCache: true };
    }
  }
  const entries = await fetch();
  const file: CacheFile<T> = { account: options.account, fetched_at: options.now.toISOString(), data: entries };
  await writeCache(path, options.dir, file);
  return { entries, fetchedAt: options.now, fromCache: false };
}

async function readCache<T>(path: string): Promise<CacheFile<T> | undefined> {
  try {
    const parsed = JSON.parse(await readFile(path, 'utf8')) as CacheFile<T>;
    if (typeof parsed?.account !== 'string' || typeof parsed.fetched_at !== 'string' || !Array.isArray(parsed.data))
      return undefined;
    return parsed;
  } catch {
    return undefined;
  }
}

async function writeCache<T>(path: string, dir: string, file: CacheFile<T>): Promise<void> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
    // Whole or not at all, so a reader running at the same moment never sees half a file.
    writeFileSafely(path, JSON.stringify(file), { sync: false });
  } catch {
    // A read-only or full disk only costs a fetch next time.
  }
}
