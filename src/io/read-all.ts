/** Everything on a stream as text (`--client-secret-stdin`); past `limit.maxBytes`, `limit.tooLarge()` is thrown. */
export async function readAll(
  stream: NodeJS.ReadableStream,
  limit?: { maxBytes: number; tooLarge: () => Error },
): Promise<string> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array);
    bytes += buffer.length;
    if (limit && bytes > limit.maxBytes) throw limit.tooLarge();
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}
