import { accessSync, constants, type Dirent, existsSync, readdirSync, type Stats, statfsSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { ExitCode } from '../../errors.js';
import { bytes, type CheckName, type CheckResult, errorCode, fail, ok, warn } from './check.js';

/** A folder leadctl writes, and what doctor expects of it. */
export interface FolderSpec {
  name: Extract<CheckName, 'config-folder' | 'state-folder' | 'temp-folder'>;
  path: string;
  /** Where the path came from, for the value ("LEADCTL_STATE_DIR", "default"). */
  source: string;
  /** The variable that moves it elsewhere, for the hints. */
  variable: 'LEADCTL_CONFIG_DIR' | 'LEADCTL_STATE_DIR' | 'LEADCTL_TMPDIR';
  /** leadctl keeps it 0700 with its files 0600. */
  private: boolean;
  /** It holds secrets (client secret, tokens, record keys): a file others can read fails. */
  secrets: boolean;
  /** Free space below which it fails, and below which it warns. */
  minFree: { fail: number; warn: number };
}

const MB = 1024 * 1024;
const GB = 1024 * MB;

export const FREE_SPACE = {
  config: { fail: 1 * MB, warn: 10 * MB },
  // Journals, delta records (one keyed digest a customer) and staging of unsorted exports.
  state: { fail: 100 * MB, warn: 1 * GB },
  temp: { fail: 100 * MB, warn: 1 * GB },
} as const;

function octal(mode: number): string {
  return (mode & 0o777).toString(8).padStart(4, '0');
}

/** The nearest folder of `path` that exists (where leadctl would create the rest). */
function existingAncestor(path: string): { path: string; stats: Stats } | undefined {
  for (let p = path; ; p = dirname(p)) {
    try {
      return { path: p, stats: statSync(p) };
    } catch {
      if (dirname(p) === p) return undefined;
    }
  }
}

/** Files in the folder and its subfolders (two levels: the config's record-keys/, the state's journals/). */
function files(dir: string, depth = 2): string[] {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isFile()) out.push(path);
    else if (e.isDirectory() && depth > 1) out.push(path, ...files(path, depth - 1));
  }
  return out;
}

function space(path: string): { free: number; inodes: number | undefined } | undefined {
  try {
    const s = statfsSync(path);
    // Filesystems without inode counts (btrfs, some network mounts) report 0 files in all.
    return { free: s.bavail * s.bsize, inodes: s.files > 0 ? s.ffree : undefined };
  } catch {
    return undefined;
  }
}

function writable(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (err) {
    return errorCode(err);
  }
}

/**
 * Is the folder (or, before its first use, the folder it would be made in) writable, with room,
 * and, for the config and state folders, private: 0700, its files 0600, owned by this user.
 * Only looks: never creates, repairs or touches anything.
 */
export function checkFolder(spec: FolderSpec): CheckResult {
  const { name, path } = spec;
  const from = spec.source === 'default' ? '' : ` (from ${spec.source})`;
  let stats: Stats;
  try {
    stats = statSync(path);
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') {
      return fail(
        name,
        `${path}${from}: cannot be read (${errorCode(err)})`,
        `check the folder's permissions`,
        ExitCode.USAGE,
      );
    }
    const parent = existingAncestor(dirname(path));
    const denied = parent ? writable(parent.path) : 'no existing parent';
    if (!parent || denied) {
      return fail(
        name,
        `${path}${from} does not exist and cannot be made: ${parent?.path ?? '/'} is not writable (${denied})`,
        `create it for the user running leadctl (mkdir -m 700 -p ${path}), or set ${spec.variable} to a folder it can write`,
        ExitCode.USAGE,
      );
    }
    const room = space(parent.path);
    const value = `${path}${from}: not made yet (leadctl makes it ${spec.private ? '0700 ' : ''}when first needed); ${parent.path} is writable${room ? `, ${bytes(room.free)} free` : ''}`;
    return spaceVerdict(spec, value, room);
  }
  if (!stats.isDirectory())
    return fail(
      name,
      `${path}${from} is not a folder`,
      'remove or rename it, or point leadctl elsewhere',
      ExitCode.USAGE,
    );

  const notes: string[] = [];
  const warnings: string[] = [];
  const hints: string[] = [];
  let loosened = false;
  let failure: { value: string; hint: string } | undefined;

  if (spec.private && process.platform !== 'win32') {
    if ((stats.mode & 0o077) !== 0) {
      notes.push(`${octal(stats.mode)} (others can list it)`);
      loosened = true;
      hints.push(`chmod 700 ${path}`);
    } else notes.push(octal(stats.mode));
    const loose = files(path).flatMap((f) => {
      try {
        const s = statSync(f);
        return (s.mode & 0o077) !== 0
          ? [{ path: f, mode: s.mode, readable: s.isFile() && (s.mode & 0o044) !== 0 }]
          : [];
      } catch {
        return [];
      }
    });
    const readable = loose.filter((f) => f.readable);
    if (loose.length === 0) notes.push('files private');
    else {
      const shown = loose.slice(0, 3).map((f) => `${relative(path, f.path)} ${octal(f.mode)}`);
      const more = loose.length > 3 ? ` and ${loose.length - 3} more` : '';
      const line = `${shown.join(', ')}${more}: others can ${readable.length ? 'read' : 'reach'} ${loose.length === 1 ? 'it' : 'them'}`;
      if (spec.secrets && readable.length > 0)
        failure = {
          value: `${path}${from}: ${[...notes, line].join(', ')} (the client secret, tokens and record keys live here)`,
          hint: `chmod -R go-rwx ${path}; then consider the secret seen: \`leadctl auth login\` with a new one`,
        };
      else {
        warnings.push(line);
        hints.push(`chmod -R go-rwx ${path}`);
      }
    }
    const uid = process.getuid?.();
    if (uid !== undefined && stats.uid !== uid) {
      warnings.push(`owned by uid ${stats.uid}, not this user (uid ${uid})`);
      hints.push('run leadctl as the folder’s owner (the cron job’s user), or give that user its own folder');
    }
  }

  const denied = writable(path);
  if (denied)
    return fail(
      name,
      `${path}${from} is not writable (${denied})`,
      `make it writable by the user running leadctl, or set ${spec.variable} to a folder it can write`,
      ExitCode.USAGE,
    );
  // Secrets others can read first: the worse news.
  if (failure) return fail(name, failure.value, failure.hint, ExitCode.USAGE);
  // A folder inside made by another user (a run as root, once) stops a push at its lock or journal.
  // Only leadctl's own folders: the temp folder holds everyone's.
  const stuck = (spec.private ? files(path) : []).filter((f) => {
    try {
      if (statSync(f).isDirectory()) return writable(f) !== undefined;
      // A journal, record or lock file of root's: read and rewritten by every push.
      accessSync(f, constants.R_OK | constants.W_OK);
      return false;
    } catch {
      return existsSync(f);
    }
  });
  if (stuck.length)
    return fail(
      name,
      `${path}${from}: ${stuck
        .slice(0, 3)
        .map((f) => relative(path, f))
        .join(
          ', ',
        )}${stuck.length > 3 ? ` and ${stuck.length - 3} more` : ''} inside it ${stuck.length === 1 ? 'is' : 'are'} not writable`,
      `give ${stuck.length === 1 ? 'it' : 'them'} to the user running leadctl: chown -R "$(id -un)" ${path} (as root)`,
      ExitCode.USAGE,
    );

  const room = space(path);
  const value = `${path}${from}: ${[...notes, ...warnings, 'writable', ...(room ? [`${bytes(room.free)} free`] : [])].join(', ')}`;
  const verdict = spaceVerdict(spec, value, room);
  if (verdict.status !== 'ok' || (warnings.length === 0 && !loosened)) return verdict;
  return warn(name, value, hints.join('; '));
}

function spaceVerdict(
  spec: FolderSpec,
  value: string,
  room: { free: number; inodes: number | undefined } | undefined,
): CheckResult {
  if (!room) return ok(spec.name, value);
  const hint = `free space on that file system (or move the folder: ${spec.variable})`;
  if (room.inodes === 0) return fail(spec.name, `${value}, but no free inodes`, hint, ExitCode.USAGE);
  if (room.free < spec.minFree.fail)
    return fail(spec.name, `${value}: under ${bytes(spec.minFree.fail)}`, hint, ExitCode.USAGE);
  if (room.free < spec.minFree.warn) return warn(spec.name, `${value}: under ${bytes(spec.minFree.warn)}`, hint);
  return ok(spec.name, value);
}
