import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import {
  closeSync,
  constants,
  createWriteStream,
  fchmodSync,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  renameSync,
  type Stats,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import { basename, dirname, join, resolve } from 'node:path';
import { EnvironmentError, environmentError, UsageError } from '../errors.js';

/**
 * The one way leadctl writes a file the user names or a state file it keeps (rejects files,
 * exports, the journal, small state files), safe on any path, whoever else can write the folder:
 *
 * - A regular file (or a new one) is written to a temporary file in the same folder, created
 *   exclusively (`O_CREAT|O_EXCL|O_NOFOLLOW`, mode 0600) under an unpredictable name
 *   (`NAME.<random>.partial`), then renamed over NAME when complete: a link planted at any name
 *   is never followed, and NAME is never half-written. On failure the temporary file is removed.
 * - A character device or a FIFO (`/dev/null`, `/dev/full`, a named pipe) is written in place,
 *   opened without truncation and never renamed over, so `/dev/null` discards and stays a device,
 *   and `/dev/full` fails with ENOSPC.
 * - A symbolic link as the target is refused (exit 2, naming it and where it points): leadctl
 *   cannot tell a link the operator made from one planted in a shared folder before a root cron
 *   run, and writing through it would let the link choose what is overwritten. Only the last
 *   component is checked; folders on the way may be links.
 * - A directory, a block device or a socket is refused (exit 2).
 *
 * Errors of the machine (no space, no permission, read-only, quota) are EnvironmentErrors (exit 2)
 * naming the target, not the temporary file.
 */

export interface SafeFileOptions {
  /** Mode of a file created here (default 0600: what leadctl writes holds personal data or state). */
  mode?: number;
  /** What the file is, for messages: "the rejects file", "--out". */
  what?: string;
  /** Flush a new file to disk before it takes its name (default true), so a crash never leaves NAME half-written. */
  sync?: boolean;
}

const TEMP_SUFFIX = '.partial';
/** Enough of NAME in the temporary name to recognise it, short of the 255-byte limit of a file name. */
const NAME_KEEP = 200;

/** The temporary name of a write to `path`: beside it, with 12 random hex digits nobody can guess. */
export function temporaryName(path: string): string {
  return join(dirname(path), `${basename(path).slice(0, NAME_KEEP)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
}

/** Matches the temporary names `temporaryName` makes for `path` (for tests and clean-up). */
export function isTemporaryOf(path: string, name: string): boolean {
  const prefix = `${basename(path).slice(0, NAME_KEEP)}.`;
  return name.startsWith(prefix) && /^[0-9a-f]{12}\.partial$/.test(name.slice(prefix.length));
}

/** The flags of the exclusive, never-following creation of a temporary file. */
export const TEMPORARY_FLAGS = constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW;

/** How a target is written: through a temporary file renamed over it, or in place (device, FIFO). */
export type TargetKind = 'new' | 'file' | 'device' | 'fifo';

function label(what: string | undefined, path: string): string {
  return what ? `${what} ${path}` : path;
}

function describe(info: Stats): string {
  if (info.isDirectory()) return 'a directory';
  if (info.isBlockDevice()) return 'a block device (a disk)';
  if (info.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * What `path` is, or a refusal: a symbolic link, a directory, a block device or a socket is
 * refused with exit 2. Callers that check a path before any work use this too.
 */
export function targetKind(path: string, what?: string): TargetKind {
  let info: Stats;
  try {
    info = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 'new';
    throw environmentError(err, path, what) ?? err;
  }
  if (info.isSymbolicLink()) throw symlinkRefusal(path, what);
  if (info.isFile()) return 'file';
  if (info.isCharacterDevice()) return 'device';
  if (info.isFIFO()) return 'fifo';
  throw new UsageError(`${label(what, path)} is ${describe(info)}; name a regular file, a character device or a FIFO`);
}

function symlinkRefusal(path: string, what: string | undefined): UsageError {
  let to = '';
  try {
    to = ` (to ${readlinkSync(path)})`;
  } catch {
    // gone since: the refusal stands
  }
  return new UsageError(`${label(what, path)} is a symbolic link${to}; leadctl does not write through links`, {
    hint: 'name the file itself (a link in a folder others can write could point anywhere)',
  });
}

/**
 * A file being written. `write` appends; `commit` completes it under its name; `discard` removes
 * what was written (a temporary file) and never throws.
 */
export class SafeFile {
  private closed = false;

  private constructor(
    /** The target, absolute. */
    readonly path: string,
    readonly fd: number,
    /** The temporary file while writing a regular file; undefined when writing in place. */
    readonly temporary: string | undefined,
    readonly kind: TargetKind,
    private readonly options: SafeFileOptions,
  ) {}

  /** Opens `path` for writing as described above. Nothing is created for a device or FIFO. */
  static open(path: string, options: SafeFileOptions = {}): SafeFile {
    const target = resolve(path);
    const kind = targetKind(target, options.what);
    if (kind === 'device' || kind === 'fifo')
      return new SafeFile(target, openInPlace(target, kind, options), undefined, kind, options);
    const mode = options.mode ?? 0o600;
    for (let attempt = 0; ; attempt++) {
      const temporary = temporaryName(target);
      let fd: number;
      try {
        fd = openSync(temporary, TEMPORARY_FLAGS, mode);
      } catch (err) {
        // Someone made that name first (12 random digits: only on purpose): take another.
        if ((err as NodeJS.ErrnoException).code === 'EEXIST' && attempt < 8) continue;
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR')
          throw new UsageError(`cannot write ${label(options.what, target)}: its folder does not exist`, {
            cause: err,
          });
        throw environmentError(err, target, options.what) ?? err;
      }
      try {
        // The mode asked for, whatever the umask.
        fchmodSync(fd, mode);
      } catch (err) {
        closeSync(fd);
        unlinkQuietly(temporary);
        throw environmentError(err, target, options.what) ?? err;
      }
      return new SafeFile(target, fd, temporary, kind, options);
    }
  }

  /** True when the target is a device or FIFO written in place. */
  get inPlace(): boolean {
    return this.temporary === undefined;
  }

  /** Writes all of `data` (a pipe may take it in parts). */
  write(data: string | Uint8Array): void {
    const bytes = typeof data === 'string' ? Buffer.from(data) : data;
    try {
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(this.fd, bytes, offset, bytes.length - offset);
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** Completes the file: flushed to disk and renamed to its name (a device or FIFO is only closed). */
  commit(): void {
    if (this.closed) return;
    try {
      if (this.temporary !== undefined && this.options.sync !== false) fsyncSync(this.fd);
      this.closed = true;
      closeSync(this.fd);
      if (this.temporary !== undefined) renameSync(this.temporary, this.path);
    } catch (err) {
      this.discard();
      throw this.failure(err);
    }
  }

  /** Removes the temporary file (nothing to remove for a device or FIFO). Never throws. */
  discard(): void {
    if (!this.closed) {
      this.closed = true;
      try {
        closeSync(this.fd);
      } catch {
        // already closed by a failed commit
      }
    }
    if (this.temporary !== undefined) unlinkQuietly(this.temporary);
  }

  /** An error of the machine as an EnvironmentError naming the target (never the temporary name). */
  failure(err: unknown): unknown {
    if (this.inPlace && (err as NodeJS.ErrnoException | undefined)?.code === 'EPIPE')
      return new EnvironmentError(`${label(this.options.what, this.path)}: the program reading it stopped (EPIPE)`, {
        hint: 'keep the reader of the pipe running until leadctl ends',
        path: this.path,
        errno: 'EPIPE',
        cause: err,
      });
    return environmentError(err, this.path, this.options.what) ?? err;
  }
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // gone already
  }
}

/**
 * A device or FIFO opened for writing without O_CREAT or O_TRUNC (nothing is replaced), never
 * through a link. A FIFO is first opened non-blocking, which fails at once when nothing reads it
 * (rather than waiting for ever, deaf to signals), then again blocking, so that writes wait for a
 * slow reader instead of failing.
 */
function openInPlace(path: string, kind: 'device' | 'fifo', options: SafeFileOptions): number {
  const flags = constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NOCTTY;
  let probe: number | undefined;
  try {
    if (kind === 'fifo') {
      try {
        probe = openSync(path, flags | constants.O_NONBLOCK);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENXIO')
          throw new EnvironmentError(`${label(options.what, path)} is a FIFO (named pipe) that nothing reads`, {
            hint: 'start the program that reads it first',
            path,
            errno: 'ENXIO',
          });
        throw err;
      }
    }
    const fd = openSync(path, flags);
    const info = fstatSync(fd);
    if (!info.isCharacterDevice() && !info.isFIFO()) {
      // Replaced by a regular file since it was looked at: writing in place would not truncate it.
      closeSync(fd);
      throw new UsageError(`${label(options.what, path)} changed while it was opened; run again`);
    }
    return fd;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw symlinkRefusal(path, options.what);
    throw environmentError(err, path, options.what) ?? err;
  } finally {
    if (probe !== undefined) closeSync(probe);
  }
}

/** Writes `data` to `path` whole or not at all (see SafeFile). */
export function writeFileSafely(path: string, data: string | Uint8Array, options: SafeFileOptions = {}): void {
  const file = SafeFile.open(path, options);
  try {
    file.write(data);
    file.commit();
  } catch (err) {
    file.discard();
    throw err;
  }
}

/**
 * A stream onto `path` for `run`, completed under its name when `run` resolves, removed when it
 * fails (see SafeFile). The stream's own errors (ENOSPC while writing) reach `run`'s writes; the
 * error thrown names the target.
 */
export async function writeStreamSafely<T>(
  path: string,
  run: (out: Writable) => Promise<T>,
  options: SafeFileOptions = {},
): Promise<T> {
  const file = SafeFile.open(path, options);
  // The descriptor stays ours (autoClose off): it is closed once, by commit or discard.
  const out = createWriteStream('', { fd: file.fd, autoClose: false });
  // An error between two writes must not go unheard (an 'error' without a listener ends the process).
  out.on('error', () => {});
  try {
    const result = await run(out);
    if (out.errored) throw out.errored;
    out.end();
    await finished(out);
    file.commit();
    return result;
  } catch (err) {
    // A write may still be under way in the thread pool: wait for it before closing the descriptor.
    if (!out.closed) {
      const closed = once(out, 'close');
      out.destroy();
      await closed;
    }
    file.discard();
    throw file.failure(err);
  }
}
