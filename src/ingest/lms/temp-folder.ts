import { mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { environmentError } from '../../errors.js';
import { isProcessAlive } from '../../io/process.js';

const STAGING_PREFIX = 'leadctl-staging-';
const OWNER_FILE = 'owner.pid';

/**
 * A run's private folder for what an export is sorted through (the SQLite staging, the line sort's
 * runs): full SSNs and account numbers pass through it, so it is made 0700 (mkdtemp) and its files
 * 0600; it is removed when the run ends, at exit if the run could not close it, and by a later run
 * when a killed one (SIGKILL, power loss) left it behind (a note names the owning process).
 */
export class TempFolder {
  readonly dir: string;
  private closed = false;

  constructor(
    readonly parentDir: string = tmpdir(),
    /** Called before the folder is removed (at close or at exit): close what is open in it. */
    private readonly beforeRemove: () => void = () => {},
  ) {
    removeStaleStaging(parentDir);
    try {
      this.dir = mkdtempSync(join(parentDir, STAGING_PREFIX));
    } catch (err) {
      throw this.failure(err);
    }
    process.once('exit', this.removeAtExit);
    try {
      // Written aside and renamed: another run sweeping stale folders reads the note whole or not at all.
      const note = join(this.dir, `${OWNER_FILE}.new`);
      writeFileSync(note, String(process.pid), { mode: 0o600 });
      renameSync(note, join(this.dir, OWNER_FILE));
    } catch (err) {
      this.close();
      throw this.failure(err);
    }
  }

  /** A path for a new file in the folder. */
  path(name: string): string {
    return join(this.dir, name);
  }

  /**
   * A full (or read-only, forbidden) folder is the machine's doing: say which folder and how to
   * point the staging elsewhere. Nothing has been sent when staging fails (rows are sent only once
   * all are staged), so there is nothing to resume.
   */
  failure(err: unknown): unknown {
    const sorts = process.env.SQLITE_TMPDIR || process.env.TMPDIR || '/var/tmp';
    return (
      environmentError(
        err,
        this.parentDir,
        'the staging folder',
        `free space there, or set LEADCTL_TMPDIR to a folder with room for about twice the export (an export staged in SQLite is also sorted in temporary files in ${sorts}: set TMPDIR to move those too)`,
      ) ?? err
    );
  }

  /** Runs `work`, its failure said as `failure` says it. */
  guard<T>(work: () => T): T {
    try {
      return work();
    } catch (err) {
      throw this.failure(err);
    }
  }

  /** Removes the folder and what it holds. Safe to call twice. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    process.off('exit', this.removeAtExit);
    try {
      this.beforeRemove();
    } finally {
      rmSync(this.dir, { recursive: true, force: true });
    }
  }

  /** An exit that skipped close (an unexpected error, process.exit) still removes the folder. */
  private readonly removeAtExit = (): void => {
    try {
      this.beforeRemove();
    } catch {
      // the folder goes anyway
    }
    rmSync(this.dir, { recursive: true, force: true });
  };
}

/** Staging folders of this user whose run is gone (killed before it could clean up). */
export function removeStaleStaging(parentDir: string): string[] {
  const removed: string[] = [];
  let names: string[];
  try {
    names = readdirSync(parentDir).filter((n) => n.startsWith(STAGING_PREFIX));
  } catch {
    return removed;
  }
  for (const name of names) {
    const dir = join(parentDir, name);
    try {
      const info = statSync(dir);
      if (!info.isDirectory() || (typeof process.getuid === 'function' && info.uid !== process.getuid())) continue;
      let pid: number | undefined;
      try {
        pid = Number(readFileSync(join(dir, OWNER_FILE), 'utf8'));
      } catch {
        pid = undefined;
      }
      // A folder without a readable owner note is one being created right now, unless it is old.
      const noted = pid !== undefined && Number.isInteger(pid) && pid > 0;
      if (noted ? isProcessAlive(pid!) : Date.now() - info.mtimeMs < 60 * 60 * 1000) continue;
      rmSync(dir, { recursive: true, force: true });
      removed.push(dir);
    } catch {
      // another run removed it first
    }
  }
  return removed;
}
