import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { FIXTURES, MAPPING, pushEnv } from './push-helpers.js';

/**
 * The binary in a real pseudo-terminal (util-linux `script`), as an operator runs it. Under a test
 * runner `script` gets a terminal that reports 0 columns: the detached-tmux case that once made the
 * spinner redraw forever.
 */
const work = mkdtempSync(join(tmpdir(), 'leadctl-e2e-tty-'));
let sandbox: TestSandbox;
let env: Record<string, string>;
beforeAll(async () => {
  sandbox = await startSandboxProcess();
  env = pushEnv(sandbox);
});
afterAll(async () => {
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** Runs `shell` in a pseudo-terminal; resolves to what the terminal showed and the exit code. */
function inTerminal(shell: string, input = '', timeoutMs = 30_000): Promise<{ screen: string; code: number | null }> {
  return new Promise((resolve) => {
    const base: Record<string, string> = {};
    for (const [k, v] of Object.entries(process.env))
      if (v !== undefined && !k.startsWith('LEADCTL_') && k !== 'CI') base[k] = v;
    const child = spawn('script', ['-qfec', shell, '/dev/null'], {
      env: { ...base, ...env, NO_COLOR: '1' },
      cwd: work,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let screen = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      screen += d;
      if (screen.length > 1_000_000) child.kill('SIGKILL');
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ screen, code });
    });
    child.stdin.end(input);
  });
}

const node = quote(process.execPath);
const leadctl = `${node} ${quote(BIN)}`;
const push = `${leadctl} customers batch ${quote(join(FIXTURES, 'export.csv'))} --mapping ${quote(MAPPING)}`;

describe('in a terminal', () => {
  it('a 0-column terminal with stdout redirected: progress lines on the terminal, the run ends, output stays small', async () => {
    const r = await inTerminal(`stty cols 0 2>/dev/null; ${push} > summary.json; echo "exit=$?"`);
    expect(r.screen.length).toBeLessThan(20_000);
    expect(r.screen).toMatch(/read 25 rows/);
    expect(r.screen).toMatch(/exit=4/);
    expect(JSON.parse(readFileSync(join(work, 'summary.json'), 'utf8'))).toMatchObject({ rows_read: 25, exit_code: 4 });
  });

  it('a terminal of usable width gets the spinner, and it ends', async () => {
    const r = await inTerminal(`stty cols 100 rows 30; ${push} -o json > summary2.json; echo "exit=$?"`);
    expect(r.screen).toMatch(/exit=4/);
    // ora hides the cursor while it spins, and shows it again at the end
    expect(r.screen).toContain('\u001b[?25l');
    expect(r.screen).toContain('\u001b[?25h');
  });

  it('asks before removing a profile, and goes on only on yes', async () => {
    const login = `printf '%s\\n' ${quote(sandbox.clientSecret)} | ${leadctl} --profile gone auth login --base-url ${quote(sandbox.baseUrl)} --client-id ${quote(sandbox.clientId)} --client-secret-stdin`;
    const no = await inTerminal(
      `stty cols 100; ${login} >/dev/null 2>&1; ${leadctl} --profile gone auth logout --remove; echo "exit=$?"`,
      'n\n',
    );
    expect(no.screen).toMatch(/Remove profile "gone" \(base URL, client id, secret and token\)\? \[y\/N\]/);
    expect(no.screen).toMatch(/not confirmed: nothing was changed[\s\S]*exit=2/);
    const yes = await inTerminal(
      `stty cols 100; ${leadctl} --profile gone auth logout --remove -o json; echo "exit=$?"`,
      'y\n',
    );
    expect(yes.screen).toMatch(/"removed": true[\s\S]*exit=0/);
  });

  it('asked on a terminal, an update that removes most of a list warns in the question instead of refusing', async () => {
    const ssns = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => `${String(200 + from + i)}-45-${String(1000 + from + i)}`).join('\n');
    const create = `printf 'ssn\n%s\n' ${quote(ssns(0, 10))} > all.csv && printf 'ssn\n%s\n' ${quote(ssns(0, 3))} > cut.csv && ${leadctl} lists create all.csv --name 'Terminal SSNs' --type ssn -o json`;
    const created = await inTerminal(`${create} > created.json; echo "exit=$?"`);
    expect(created.screen).toContain('exit=0');
    const id = JSON.parse(readFileSync(join(work, 'created.json'), 'utf8')).list_id as number;
    const r = await inTerminal(
      `stty cols 200; ${leadctl} lists update ${id} cut.csv -o json > updated.json; echo "exit=$?"`,
      'y\n',
    );
    expect(r.screen).toContain(
      'Warning: cut.csv would remove 7 of the 10 values last uploaded from here (70%): is the file whole?',
    );
    expect(r.screen).toMatch(
      /Replace every value of list \d+ \("Terminal SSNs"\) with the 3 values of cut.csv\? \[y\/N\][\s\S]*exit=0/,
    );
    expect(JSON.parse(readFileSync(join(work, 'updated.json'), 'utf8')).changes).toEqual({
      added: 0,
      removed: 7,
      unchanged: 3,
    });
  });

  it('auth login asks "Client id:" where it can be seen before anything is typed', async () => {
    const r = await inTerminal(
      `stty cols 100; unset LEADCTL_CLIENT_ID LEADCTL_CLIENT_SECRET; ${leadctl} --profile typed auth login --base-url ${quote(sandbox.baseUrl)}; echo "exit=$?"`,
      'some-client\n',
    );
    // The line as the terminal last drew it before the answer: readline's redraw must not wipe the question.
    const upToAnswer = r.screen.slice(0, r.screen.lastIndexOf('some-client'));
    const lastClear = upToAnswer.lastIndexOf('\u001b[0J');
    expect(upToAnswer.slice(Math.max(0, lastClear))).toContain('Client id: ');
    expect(r.screen).toContain('Client secret (input hidden): ');
  });

  it('auth token prints the bare token for $(…) when stdout is a pipe', async () => {
    const r = await inTerminal(
      `stty cols 100; t=$(${leadctl} auth token); curl -s -o /dev/null -w "status=%{http_code}" -H "Authorization: Bearer $t" ${quote(sandbox.baseUrl + '/api/v1/resources/management-systems')}`,
    );
    expect(r.screen).toContain('status=200');
  });
});

describe('retries are visible', () => {
  it('each retry of a failing request is a line on stderr: what failed, which retry, when', async () => {
    const { runBinary } = await import('../helpers/binary.js');
    const failing = await startSandboxProcess(['--fail-rate', '1']);
    try {
      const r = await runBinary(
        ['customers', 'batch', join(FIXTURES, 'export.csv'), '--mapping', MAPPING, '-o', 'json'],
        {
          env: { ...pushEnv(failing), LEADCTL_RETRY_ATTEMPTS: '3' },
          cwd: work,
        },
      );
      expect(r.code).toBe(5);
      expect(r.stderr).toMatch(
        /POST \/api\/v1\/loan-performance\/batches\/customers: HTTP 503, retry 1 of 2 in [\d.]+ m?s/,
      );
      expect(r.stderr).toMatch(/retry 2 of 2 in/);
      const quiet = await runBinary(
        ['customers', 'batch', join(FIXTURES, 'export.csv'), '--mapping', MAPPING, '-o', 'json', '-q'],
        {
          env: { ...pushEnv(failing), LEADCTL_RETRY_ATTEMPTS: '2' },
          cwd: work,
        },
      );
      expect(quiet.stderr).not.toMatch(/retry 1 of/);
    } finally {
      await failing.stop();
    }
  });
});
