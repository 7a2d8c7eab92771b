// Preloaded into the binary by a test (`node --import <this file> bin/leadctl.js …`): the first time
// stdout gets a write containing LEADCTL_TEST_PAUSE_AT, the process stops itself (SIGSTOP) right
// after that write, so that a test acts on it at that very point, however slow the test's worker
// is to read it; the test then sends SIGCONT. Writes to a pipe are synchronous on Linux: the text
// is in the pipe before the process stops.
const marker = process.env.LEADCTL_TEST_PAUSE_AT;
if (marker) {
  const write = process.stdout.write;
  let paused = false;
  process.stdout.write = function (chunk, ...rest) {
    const result = write.call(this, chunk, ...rest);
    if (!paused && String(chunk).includes(marker)) {
      paused = true;
      process.kill(process.pid, 'SIGSTOP');
    }
    return result;
  };
}
