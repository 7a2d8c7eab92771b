import type { Dispatcher } from 'undici';

/**
 * Reads an answer's body, refusing it unread past `limit` bytes: a Content-Length above the limit
 * is refused before the first byte, and a body without one is counted as it arrives. A 2 GB
 * answer (a misrouted download, a proxy gone wrong) costs `limit` bytes of memory at most.
 */

export type AnswerBody =
  | { kind: 'read'; text: string; bytes: number }
  | { kind: 'too-large'; limit: number; declared?: number };

export async function readAnswerBody(res: Dispatcher.ResponseData, limit: number): Promise<AnswerBody> {
  const declared = contentLength(res.headers['content-length']);
  if (declared !== undefined && declared > limit) {
    res.body.destroy();
    return { kind: 'too-large', limit, declared };
  }
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    bytes += chunk.length;
    if (bytes > limit) {
      chunks.length = 0;
      res.body.destroy();
      return { kind: 'too-large', limit };
    }
    chunks.push(chunk);
  }
  return { kind: 'read', text: Buffer.concat(chunks, bytes).toString('utf8'), bytes };
}

function contentLength(value: string | string[] | undefined): number | undefined {
  const raw = Array.isArray(value) ? value[0] : value;
  if (raw === undefined || !/^\s*\d+\s*$/.test(raw)) return undefined;
  return Number(raw);
}
