import type { CustomerGroup } from '../../ingest/lms/groups.js';
import type { CustomerDelta } from '../delta/customers.js';
import type { RunAccount } from './accounting.js';
import { type Chunk, Chunker, type ChunkLimits } from './chunker.js';
import { ReadingStopped } from './reading.js';
import type { StopReason } from './summary.js';
import { validateGroup } from './validate.js';

export interface PassOptions {
  account: RunAccount;
  limits: ChunkLimits;
  /** A streamed export counts its customers as they come; a staged one knows them beforehand. */
  streaming: boolean;
  /** The record of what was sent (`--changed-only`, `--full`), begun for this run. */
  delta: CustomerDelta | undefined;
  /** Why the run stopped, once it has. */
  stop(): StopReason | undefined;
  /** Takes a chunk to send (or count); may wait for a free request. */
  dispatch(chunk: Chunk): Promise<void>;
  /** Waits for the requests in flight. */
  drain(): Promise<void>;
}

/**
 * One pass over the customer groups: each is checked and counted, compared with the record of
 * what was sent (a group the reader already found unchanged by its raw rows is only counted), and
 * what is to be sent is cut into chunks for `dispatch`. Once the run stops,
 * what was read but not sent is counted as not sent, and a staged export is counted to its end.
 */
export async function checkAndChunk(
  groups: Iterable<CustomerGroup> | AsyncIterable<CustomerGroup>,
  o: PassOptions,
): Promise<void> {
  const { account, delta } = o;
  const chunker = new Chunker(o.limits);
  const iterator =
    Symbol.asyncIterator in groups
      ? (groups as AsyncIterable<CustomerGroup>)[Symbol.asyncIterator]()
      : (groups as Iterable<CustomerGroup>)[Symbol.iterator]();
  let stoppedEarly = false;
  try {
    while (true) {
      if (o.stop() !== undefined) {
        stoppedEarly = true;
        break;
      }
      let next: IteratorResult<CustomerGroup>;
      try {
        next = await iterator.next();
      } catch (err) {
        // A signal stopped the reading itself (it was waiting on a pipe, say): stop as above.
        if (!(err instanceof ReadingStopped)) throw err;
        account.inputFullyRead = false;
        stoppedEarly = true;
        break;
      }
      if (next.done) break;
      const group = next.value;
      if (o.streaming) account.totalCustomers++;
      if (group.unchanged) {
        // Its raw rows are those recorded as sent (the reader asked the delta): nothing to convert or check.
        account.unchangedAsRead(group.unchanged);
        continue;
      }
      const result = validateGroup(group);
      account.checked(result);
      if (!result.valid) continue;
      if (delta) {
        // Raw rows are recorded only for a customer with nothing refused: equal rows next time refuse nothing either.
        const raw = result.rejects.length === 0 ? group.raw : undefined;
        const digest = delta.digestOf(result.valid.customerId, result.payload!, raw);
        if (!delta.shouldSend(digest)) {
          account.unchanged(result.valid);
          continue;
        }
        result.valid.digest = digest;
      }
      const closed = chunker.add(result.valid);
      if (closed) await o.dispatch(closed);
    }
    if (!stoppedEarly) {
      const last = chunker.finish();
      if (last) await o.dispatch(last);
    }
    delta?.flushRaw();
    await o.drain();
  } catch (err) {
    await iterator.return?.();
    throw err;
  }
  if (!stoppedEarly) return;
  const unsent = chunker.finish();
  if (unsent) {
    account.made();
    account.pending(unsent);
  }
  if (o.streaming && o.stop()?.kind === 'signal') {
    // Someone is waiting for the process to end: reading the rest just to count it can wait for --resume.
    account.inputFullyRead = false;
    await iterator.return?.();
    return;
  }
  for (let next = await iterator.next(); !next.done; next = await iterator.next()) account.readNotSent(next.value);
}
