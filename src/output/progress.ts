/**
 * Progress of long runs on stderr: an ora spinner on a terminal, plain timestamped lines
 * otherwise (cron logs), nothing with --quiet or --output json.
 */
import type { OutputStream } from '../io/io.js';

export interface Progress {
  /** Begins (or restarts) with a status text. */
  start(text: string): void;
  /** The current status; on a terminal it replaces the spinner text, in logs it is printed at most every few seconds. */
  update(text: string): void;
  /** A line that stays (a warning, a finished step), printed above the spinner. */
  note(line: string): void;
  succeed(text?: string): void;
  fail(text?: string): void;
  /** Stops without a final line. */
  stop(): void;
  /** Resolves once everything asked so far has reached stderr (the spinner library loads lazily). */
  flush(): Promise<void>;
}

export type ProgressMode = 'spinner' | 'lines' | 'silent';

export interface ProgressSettings {
  mode: ProgressMode;
  color: boolean;
  /** Minimum time between two plain status lines. */
  lineIntervalMs?: number;
  now?: () => number;
}

/** Narrower terminals (a detached tmux pane reports 0) get plain lines: a spinner there redraws without end. */
export const MIN_SPINNER_COLUMNS = 20;

/**
 * Progress goes to stderr whatever stdout carries (`leadctl customers batch … > summary.json` is
 * the common interactive use): a spinner on a terminal of usable width, plain timestamped lines
 * elsewhere (cron logs, CI consoles, a 0-column pane), nothing with --quiet.
 */
export function progressMode(options: {
  stderrIsTTY: boolean;
  quiet: boolean;
  columns?: number;
  ci?: boolean;
}): ProgressMode {
  if (options.quiet) return 'silent';
  if (!options.stderrIsTTY || options.ci) return 'lines';
  return options.columns !== undefined && options.columns >= MIN_SPINNER_COLUMNS ? 'spinner' : 'lines';
}

/** The mode for a process's own stderr and environment (CI set: no animation). */
export function progressModeFor(
  stderr: OutputStream,
  env: Record<string, string | undefined>,
  quiet: boolean,
): ProgressMode {
  const ci = env.CI !== undefined && env.CI !== '' && env.CI !== 'false' && env.CI !== '0';
  return progressMode({
    stderrIsTTY: stderr.isTTY === true,
    quiet,
    columns: (stderr as { columns?: number }).columns,
    ci,
  });
}

const SILENT: Progress = {
  start() {},
  update() {},
  note() {},
  succeed() {},
  fail() {},
  stop() {},
  flush: async () => {},
};

export function createProgress(stderr: OutputStream, settings: ProgressSettings): Progress {
  if (settings.mode === 'silent') return SILENT;
  if (settings.mode === 'lines')
    return new LineProgress(stderr, settings.lineIntervalMs ?? 5000, settings.now ?? Date.now);
  // A stream that only claims to be a terminal (tests, wrappers) cannot move the cursor: plain lines then.
  if (typeof (stderr as { cursorTo?: unknown }).cursorTo !== 'function') {
    return new LineProgress(stderr, settings.lineIntervalMs ?? 5000, settings.now ?? Date.now);
  }
  return new SpinnerProgress(stderr, settings.color);
}

class LineProgress implements Progress {
  private lastAt = -Infinity;
  private pending?: string;

  constructor(
    private readonly stream: OutputStream,
    private readonly intervalMs: number,
    private readonly now: () => number,
  ) {}

  private line(text: string): void {
    this.stream.write(text.endsWith('\n') ? text : text + '\n');
  }

  start(text: string): void {
    this.lastAt = this.now();
    this.pending = undefined;
    this.line(text);
  }

  update(text: string): void {
    const now = this.now();
    if (now - this.lastAt >= this.intervalMs) {
      this.lastAt = now;
      this.pending = undefined;
      this.line(text);
    } else {
      this.pending = text;
    }
  }

  note(line: string): void {
    this.line(line);
  }

  succeed(text?: string): void {
    this.finish(text);
  }

  fail(text?: string): void {
    this.finish(text);
  }

  stop(): void {
    this.pending = undefined;
  }

  async flush(): Promise<void> {}

  private finish(text?: string): void {
    // The last status before the end matters in a log even if it came too soon after the previous one.
    if (text === undefined && this.pending !== undefined) this.line(this.pending);
    if (text !== undefined) this.line(text);
    this.pending = undefined;
  }
}

type OraInstance = import('ora').Ora;

/**
 * ora is imported on first use; until it has loaded, calls are remembered and replayed,
 * so callers can stay synchronous.
 */
class SpinnerProgress implements Progress {
  private spinner?: OraInstance;
  private queue: Array<(s: OraInstance) => void> = [];
  private loading?: Promise<void>;

  constructor(
    private readonly stream: OutputStream,
    private readonly color: boolean,
  ) {}

  private with(action: (s: OraInstance) => void): void {
    if (this.spinner) {
      action(this.spinner);
      return;
    }
    this.queue.push(action);
    this.loading ??= import('ora').then(({ default: ora }) => {
      this.spinner = ora({
        stream: this.stream as NodeJS.WritableStream,
        // progressModeFor already chose the spinner (a terminal, wide enough, not CI); ora's own
        // check would also read CI from the environment of the process rather than of this run.
        isEnabled: (this.stream as { isTTY?: boolean }).isTTY === true,
        color: this.color ? 'cyan' : false,
        discardStdin: false,
        hideCursor: true,
      });
      for (const queued of this.queue) queued(this.spinner);
      this.queue = [];
    });
  }

  start(text: string): void {
    this.with((s) => s.start(text));
  }

  update(text: string): void {
    this.with((s) => {
      if (s.isSpinning) s.text = text;
      else s.start(text);
    });
  }

  note(line: string): void {
    this.with((s) => {
      const wasSpinning = s.isSpinning;
      const text = s.text;
      if (wasSpinning) s.clear();
      this.stream.write(line.endsWith('\n') ? line : line + '\n');
      if (wasSpinning) s.start(text);
    });
  }

  succeed(text?: string): void {
    this.with((s) => s.succeed(text));
  }

  fail(text?: string): void {
    this.with((s) => s.fail(text));
  }

  stop(): void {
    this.with((s) => s.stop());
  }

  /** Resolves once every queued call has reached the spinner (tests and clean shutdown). */
  async flush(): Promise<void> {
    await this.loading;
  }
}
