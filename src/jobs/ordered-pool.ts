/**
 * Runs `fn` over `source` with at most `concurrency` calls in flight and yields the results in
 * the source's order. At most `window` items are held (running or finished but not yet yielded),
 * so a slow item delays the output but memory stays bounded whatever the source's length.
 * `fn` should turn its own failures into results; a throw ends the iteration.
 */
export async function* mapOrdered<T, R>(
  source: Iterable<T> | AsyncIterable<T>,
  concurrency: number,
  fn: (item: T, index: number) => Promise<R>,
  window: number = Math.max(concurrency * 4, 16),
): AsyncGenerator<R> {
  const limit = Math.max(1, Math.floor(concurrency));
  let running = 0;
  const waiting: (() => void)[] = [];
  const acquire = (): Promise<void> => {
    if (running < limit) {
      running++;
      return Promise.resolve();
    }
    return new Promise((resolve) => waiting.push(resolve));
  };
  // A freed slot passes straight to the next waiter, in order, so the count stays right.
  const release = (): void => {
    const next = waiting.shift();
    if (next) next();
    else running--;
  };

  const iterator: Iterator<T> | AsyncIterator<T> =
    Symbol.asyncIterator in source
      ? (source as AsyncIterable<T>)[Symbol.asyncIterator]()
      : (source as Iterable<T>)[Symbol.iterator]();
  const queue: Promise<R>[] = [];
  let index = 0;
  let exhausted = false;

  const fill = async (): Promise<void> => {
    while (!exhausted && queue.length < Math.max(window, limit)) {
      const next = await iterator.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      const i = index++;
      const item = next.value;
      const task = (async () => {
        await acquire();
        try {
          return await fn(item, i);
        } finally {
          release();
        }
      })();
      // Handled when its turn comes; this only stops an early failure from being reported as unhandled.
      task.catch(() => undefined);
      queue.push(task);
    }
  };

  await fill();
  while (queue.length > 0) {
    const result = await queue.shift()!;
    yield result;
    await fill();
  }
}
