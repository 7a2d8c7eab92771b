import { performance } from 'node:perf_hooks';
import { type ApiClient, LISTS_PATHS } from '../../api/client.js';
import { listsPathMemory } from '../../config/lists-path.js';
import { AuthError, ExitCode, LeadctlError, NotFoundError } from '../../errors.js';
import { ListPageSchema } from '../../schema/index.js';
import { type CheckResult, duration, fail, ok, warn } from './check.js';

/** A failed request as a check: the error's own message, hint and exit code (the caller redacts). */
function failure(name: 'token' | 'lists-path', err: unknown, prefix = ''): CheckResult {
  if (err instanceof LeadctlError)
    return fail(
      name,
      prefix + err.message,
      err.hint ?? null,
      err.exitCode === ExitCode.UNEXPECTED ? ExitCode.SERVICE : err.exitCode,
    );
  return fail(name, prefix + String((err as Error)?.message ?? err), null, ExitCode.SERVICE);
}

/**
 * Does the service give a token for these client credentials (OAuth client credentials, one
 * attempt)? The token is neither shown nor saved.
 */
export async function checkToken(client: ApiClient, now: () => Date): Promise<CheckResult> {
  const started = performance.now();
  try {
    const t = await client.authenticate();
    const took = (performance.now() - started) / 1000;
    return ok(
      'token',
      `a token came back in ${took < 0.1 ? 'under 0.1' : took.toFixed(1)} s, valid ${duration(t.expiresAt - now().getTime())} (not shown, not saved)`,
    );
  } catch (err) {
    return failure('token', err);
  }
}

/**
 * Which lists prefix answers `GET …?page=1` (lists are served under one of two documented paths,
 * depending on the deployment; the client probes them and remembers the one that worked).
 * `--lists-path` is tried alone, as the commands use it alone. Nothing is remembered here.
 */
export async function checkListsPath(
  client: ApiClient,
  options: { override?: string; stateDir: string; profile: string; baseUrl: string },
): Promise<CheckResult> {
  const remembered = listsPathMemory(options.stateDir, options.profile, options.baseUrl).get();
  const candidates = options.override ? [options.override] : [...LISTS_PATHS];
  const answers: string[] = [];
  const missing: string[] = [];
  for (const prefix of candidates) {
    try {
      // The same rule as `lists ls`: a 2xx counts only when it is a page of lists.
      await client.send({
        method: 'GET',
        path: prefix,
        query: [['page', 1]],
        auth: 'bearer',
        repeat: 'safe',
        answer: { schema: ListPageSchema },
      });
      answers.push(prefix);
    } catch (err) {
      if (err instanceof NotFoundError) {
        missing.push(prefix);
        continue;
      }
      if (err instanceof AuthError && err.http?.status === 403)
        return warn(
          'lists-path',
          `${prefix} refused this client (HTTP 403)`,
          'lists commands need a client allowed to manage lists: ask whoever gave you the credentials',
        );
      return failure('lists-path', err, `${prefix}: `);
    }
  }
  const memory = remembered
    ? answers.includes(remembered)
      ? `; remembered for this profile: ${remembered}`
      : `; remembered ${remembered} no longer answers (commands fall back and remember the new one)`
    : '';
  if (answers.length > 0) {
    const also = missing.length > 0 ? ` (${missing.join(', ')}: no such route)` : '';
    return ok(
      'lists-path',
      `lists answer at ${answers.join(' and ')}${also}${options.override ? ' (--lists-path)' : ''}${memory}`,
    );
  }
  return fail(
    'lists-path',
    `no lists at ${missing.join(' or ')} (HTTP 404: no such route)`,
    options.override
      ? `check --lists-path ${options.override}; without it, leadctl tries ${LISTS_PATHS.join(' and ')}`
      : 'check the base URL; if this deployment serves lists under another path, give it with --lists-path',
    ExitCode.USAGE,
  );
}
