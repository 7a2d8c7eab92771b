/**
 * Named profiles in the config file: base URL, client id, client secret and cached token.
 * The file is written through conf (atomic temp file + rename), under a lock file, after
 * re-reading it, so concurrent leadctl processes never corrupt it or lose each other's changes.
 * The folder is kept at 0700 and the file at 0600, repaired on every write.
 */
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import type Conf from 'conf';
import { ExitCode, LeadctlError, UsageError } from '../errors.js';
import { withFileLock } from './lock.js';
import { CONFIG_FILE_NAME, configFilePath } from './paths.js';

export const DEFAULT_PROFILE = 'default';
export const PROFILE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

export interface StoredToken {
  access_token: string;
  /** ISO 8601. */
  expires_at: string;
  obtained_at: string;
  /** Which client and service the token belongs to; a token is never used for another. */
  client_id: string;
  base_url: string;
}

export interface Profile {
  base_url: string;
  client_id?: string;
  client_secret?: string;
  token?: StoredToken;
  /** ISO 8601 time of the last `auth login`. */
  logged_in_at?: string;
}

export interface ConfigData {
  current_profile?: string;
  profiles: Record<string, Profile>;
}

export function validateProfileName(name: string, origin = '--profile'): string {
  if (!PROFILE_NAME_PATTERN.test(name)) {
    throw new UsageError(
      `the profile name "${name}" (from ${origin}) is not valid: use letters, digits, ".", "_" or "-" (at most 64, starting with a letter or digit)`,
    );
  }
  return name;
}

function emptyConfig(): ConfigData {
  return { profiles: {} };
}

/** Accepts whatever is in the file and keeps only what we understand, so a hand edit cannot crash a run. */
export function normalize(raw: unknown): ConfigData {
  const data = emptyConfig();
  if (!raw || typeof raw !== 'object') return data;
  const obj = raw as Record<string, unknown>;
  if (typeof obj.current_profile === 'string') data.current_profile = obj.current_profile;
  if (obj.profiles && typeof obj.profiles === 'object') {
    for (const [name, value] of Object.entries(obj.profiles as Record<string, unknown>)) {
      if (value && typeof value === 'object' && typeof (value as Profile).base_url === 'string')
        data.profiles[name] = value as Profile;
    }
  }
  return data;
}

/**
 * What a write puts in the file: `data` (what this version understood, changed) beside what it did
 * not understand, as it was: a profile of another shape (a hand edit, a newer version's) and other
 * keys are kept, never dropped by the next `auth login` without a word.
 */
function mergeBack(raw: unknown, data: ConfigData): Record<string, unknown> {
  const old = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>) : {};
  const oldProfiles =
    old.profiles && typeof old.profiles === 'object' && !Array.isArray(old.profiles)
      ? (old.profiles as Record<string, unknown>)
      : {};
  const understood = normalize(old).profiles;
  const kept = Object.fromEntries(Object.entries(oldProfiles).filter(([name]) => !Object.hasOwn(understood, name)));
  const out: Record<string, unknown> = { ...old, profiles: { ...kept, ...data.profiles } };
  if (data.current_profile === undefined) delete out.current_profile;
  else out.current_profile = data.current_profile;
  return out;
}

/** The profiles of a config file that `normalize` leaves out (a hand edit of another shape), by name. */
export function ignoredProfiles(raw: unknown): string[] {
  if (!raw || typeof raw !== 'object') return [];
  const profiles = (raw as Record<string, unknown>).profiles;
  if (!profiles || typeof profiles !== 'object' || Array.isArray(profiles)) return [];
  const read = normalize(raw).profiles;
  return Object.keys(profiles).filter((name) => !Object.hasOwn(read, name));
}

export class ProfileStore {
  readonly path: string;
  private readonly lockPath: string;

  constructor(
    readonly dir: string,
    private readonly conf: () => Conf<Record<string, unknown>>,
  ) {
    this.path = configFilePath(dir);
    this.lockPath = this.path + '.lock';
  }

  exists(): boolean {
    return existsSync(this.path);
  }

  /** The whole configuration; an absent file reads as empty and is not created. */
  read(): ConfigData {
    if (!this.exists()) return emptyConfig();
    this.tightenLooseModes();
    try {
      return normalize(this.conf().store);
    } catch (error) {
      throw unreadable(this.path, error);
    }
  }

  profile(name: string): Profile | undefined {
    return this.read().profiles[name];
  }

  /**
   * Read-modify-write under the lock. `change` gets the current content (re-read inside the
   * lock, so another process's change made meanwhile is kept) and edits it in place.
   */
  update(change: (data: ConfigData) => void, what = 'the configuration'): ConfigData {
    try {
      this.ensureDir();
      return this.locked(() => {
        let data: ConfigData;
        let raw: Record<string, unknown> = {};
        try {
          if (this.exists()) raw = this.conf().store;
          data = normalize(raw);
        } catch (error) {
          throw unreadable(this.path, error);
        }
        change(data);
        this.conf().store = mergeBack(raw, data);
        this.repairModes();
        return data;
      });
    } catch (error) {
      throw unwritable(error, this.dir, what) ?? error;
    }
  }

  saveProfile(name: string, profile: Profile, options: { makeCurrent?: boolean } = {}): void {
    this.update((data) => {
      data.profiles[name] = profile;
      if (options.makeCurrent || !data.current_profile) data.current_profile = name;
    }, `the profile "${name}"`);
  }

  saveToken(name: string, token: StoredToken): void {
    this.update((data) => {
      const profile = data.profiles[name];
      if (profile) profile.token = token;
    }, `the access token of profile "${name}"`);
  }

  clearToken(name: string): void {
    if (!this.profile(name)?.token) return;
    this.update((data) => {
      delete data.profiles[name]?.token;
    }, `profile "${name}" (to forget its token)`);
  }

  /** Forgets the secret and token of a profile; keeps base URL and client id. Returns false if absent. */
  forgetSecrets(name: string): boolean {
    if (!this.profile(name)) return false;
    this.update((data) => {
      const profile = data.profiles[name];
      if (profile) {
        delete profile.client_secret;
        delete profile.token;
      }
    }, `profile "${name}" (to forget its secret and token)`);
    return true;
  }

  removeProfile(name: string): boolean {
    if (!this.profile(name)) return false;
    this.update((data) => {
      delete data.profiles[name];
      if (data.current_profile === name) data.current_profile = Object.keys(data.profiles)[0];
    }, `the configuration (to remove profile "${name}")`);
    return true;
  }

  private locked<T>(fn: () => T): T {
    try {
      return withFileLock(this.lockPath, fn);
    } catch (error) {
      if (error instanceof Error && /is locked by another leadctl process/.test(error.message)) {
        throw new LeadctlError('config_locked', ExitCode.LOCKED, error.message, {
          hint: 'wait for the other leadctl run to finish and try again',
          cause: error,
        });
      }
      throw error;
    }
  }

  /** A file copied or restored with loose permissions is tightened as soon as we see it. */
  private tightenLooseModes(): void {
    if (process.platform === 'win32') return;
    try {
      if ((statSync(this.path).mode & 0o077) !== 0) chmodSync(this.path, 0o600);
      if ((statSync(this.dir).mode & 0o077) !== 0) chmodSync(this.dir, 0o700);
    } catch {
      // Not ours to change (another owner, read-only media): reading still works.
    }
  }

  private ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  /** Folder 0700, file 0600, whatever umask or an older version left. */
  private repairModes(): void {
    if (process.platform === 'win32') return;
    chmodSync(this.dir, 0o700);
    chmodSync(this.path, 0o600);
  }
}

/** Why a folder cannot be written, in words, by the system's error code. */
const UNWRITABLE: Record<string, string> = {
  EROFS: 'it is on a read-only file system',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'a part of the path is a file, not a folder',
  ENOSPC: 'the disk is full',
  EDQUOT: 'the disk quota is used up',
};

/** A write into the config folder that the system refused: an environment problem (exit 2), never a bug. */
function unwritable(error: unknown, dir: string, what: string): UsageError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (!code || !(code in UNWRITABLE) || error instanceof LeadctlError) return undefined;
  const where = (error as NodeJS.ErrnoException).path ?? dir;
  return new UsageError(`cannot save ${what} in ${dir}: ${UNWRITABLE[code]} (${code}, ${where})`, {
    hint: `make ${dir} writable for this user, or point LEADCTL_CONFIG_DIR at a writable folder (e.g. LEADCTL_CONFIG_DIR=$HOME/.config/leadctl)`,
    details: { path: where, config_dir: dir, code },
    cause: error,
  });
}

function unreadable(path: string, error: unknown): UsageError {
  // JSON.parse's message quotes the text around the fault, and this file holds client secrets.
  if (error instanceof SyntaxError)
    return new UsageError(`the configuration file ${path} cannot be read: it is not valid JSON`, {
      hint: `fix the file by hand (it may have been cut short or edited), or delete it and run \`leadctl auth login\` again`,
    });
  const reason = error instanceof Error ? error.message : String(error);
  return new UsageError(`the configuration file ${path} cannot be read: ${reason}`, {
    hint: `fix the file by hand, or delete it and run \`leadctl auth login\` again`,
    cause: error,
  });
}

/** Opens the store; conf (and its dependencies) are loaded only here, when a command needs them. */
export async function openProfileStore(dir: string): Promise<ProfileStore> {
  const { default: ConfClass } = await import('conf');
  let instance: Conf<Record<string, unknown>> | undefined;
  const conf = () =>
    (instance ??= new ConfClass<Record<string, unknown>>({
      cwd: dir,
      configName: basename(CONFIG_FILE_NAME, '.json'),
      fileExtension: 'json',
      projectSuffix: '',
      configFileMode: 0o600,
      accessPropertiesByDotNotation: false,
      clearInvalidConfig: false,
    }));
  return new ProfileStore(dir, conf);
}
