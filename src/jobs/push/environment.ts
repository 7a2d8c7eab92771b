import type { ApiClient } from '../../api/client.js';
import type { IO } from '../../io/io.js';
import type { PushEvent } from './progress.js';
import type { PushSummary } from './summary.js';

/** What a push (`customers batch`, and the pushes of one request per record) is given, and gives back. */

/** Where a push goes: the journal and the lock are per profile, base URL and client. */
export interface PushTarget {
  profile: string;
  baseUrl: string;
  clientId?: string;
}

export interface PushEnvironment {
  io: IO;
  /** Profile name and base URL the run talks to (journal key, lock). */
  target(): Promise<PushTarget>;
  api(): Promise<ApiClient>;
  onEvent(event: PushEvent): void;
  /** A diagnostic line on stderr. */
  warn(line: string): void;
  stopGraceMs?: number;
}

export interface PushOutcome {
  summary: PushSummary;
  exitCode: number;
}
