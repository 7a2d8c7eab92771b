import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/leadctl.js', import.meta.url));

export interface RunResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs the built binary as a user would, with its own environment only (no inherited LEADCTL_*). */
export function runBinary(
  args: string[],
  options: { env?: Record<string, string>; input?: string; cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const baseEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !k.startsWith('LEADCTL_')) baseEnv[k] = v;
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...baseEnv, NO_COLOR: '1', ...options.env },
      cwd: options.cwd,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 60_000);
    child.on('error', reject);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // Exit 1 is a bug in leadctl: its stderr goes to the test log, where a failure elsewhere
      // in the test (a count, a later step) would otherwise leave no trace of the cause.
      if (code === 1) console.error(`leadctl ${args.join(' ')} exited 1; its stderr:\n${stderr}`);
      resolve({ code, signal, stdout, stderr });
    });
    child.stdin.end(options.input ?? '');
  });
}

/** The JSON error document a run with stdout piped (JSON implied, not asked for) writes as the last line of stderr. */
export function stderrDocument(stderr: string): any {
  const lines = stderr.trimEnd().split('\n');
  return JSON.parse(lines[lines.length - 1]!);
}

/**
 * Stderr as a person reads it: a run with stdout piped and no format chosen writes its error as
 * the JSON document only (nothing on a terminal, JSON implied); this puts it back into the
 * `Error:` and `Hint:` lines leadctl writes otherwise, so assertions about the words hold either way.
 */
export function errorLines(stderr: string): string {
  const lines = stderr.trimEnd().split('\n');
  let doc: any;
  try {
    doc = JSON.parse(lines[lines.length - 1]!);
  } catch {
    return stderr;
  }
  if (typeof doc?.error?.message !== 'string') return stderr;
  const rendered = [`Error: ${doc.error.message}`, ...(doc.error.hint ? [`Hint: ${doc.error.hint}`] : [])];
  return [...lines.slice(0, -1), ...rendered].join('\n') + '\n';
}
