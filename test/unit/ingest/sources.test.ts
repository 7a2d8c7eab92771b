import { execFileSync, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { InputError, InterruptedError } from '../../../src/errors.js';
import { firstInvalidUtf8, notAWorkbook, openInput, peekText, readWholeText } from '../../../src/ingest/sources.js';

const dir = mkdtempSync(join(tmpdir(), 'leadctl-sources-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, content: Buffer | string): string {
  writeFileSync(join(dir, name), content);
  return name;
}

function io(stdinChunks: Buffer[] = []) {
  return { cwd: dir, stdin: Readable.from(stdinChunks) };
}

async function text(source: { stream: Readable }): Promise<string> {
  let out = '';
  for await (const chunk of source.stream) out += chunk as string;
  return out;
}

async function failure(promise: Promise<unknown>): Promise<InputError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return err as InputError;
  }
  throw new Error('expected an InputError');
}

describe('openInput', () => {
  it('reads a UTF-8 file relative to the working directory and names it as typed', async () => {
    const source = await openInput(file('plain.txt', 'a\nb\n'), io());
    expect(source.name).toBe('plain.txt');
    expect(source.gzipped).toBe(false);
    expect(await text(source)).toBe('a\nb\n');
  });

  it('strips a UTF-8 byte order mark', async () => {
    const source = await openInput(
      file('bom.csv', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('SSN\r\n123\r\n')])),
      io(),
    );
    expect(await text(source)).toBe('SSN\r\n123\r\n');
  });

  it('decompresses gzip by its content, whatever the name', async () => {
    const source = await openInput(file('misnamed.txt', gzipSync('x,y\n1,2\n')), io());
    expect(source.gzipped).toBe(true);
    expect(await text(source)).toBe('x,y\n1,2\n');
  });

  it('decompresses a gzipped file with a BOM inside', async () => {
    const source = await openInput(
      file('bom.csv.gz', gzipSync(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('é\n')]))),
      io(),
    );
    expect(await text(source)).toBe('é\n');
  });

  it('reads standard input for "-", gzipped or not, and calls it stdin', async () => {
    const plain = await openInput('-', io([Buffer.from('one\n'), Buffer.from('two\n')]));
    expect(plain.name).toBe('stdin');
    expect(await text(plain)).toBe('one\ntwo\n');
    const zipped = await openInput('-', io([gzipSync('three\n')]));
    expect(zipped.gzipped).toBe(true);
    expect(await text(zipped)).toBe('three\n');
  });

  it('keeps a multi-byte character split across chunks intact', async () => {
    const bytes = Buffer.from('Café Ñandú\n');
    const cut = bytes.indexOf(0xc3) + 1; // inside the two bytes of "é"
    const source = await openInput('-', io([bytes.subarray(0, cut), bytes.subarray(cut)]));
    expect(await text(source)).toBe('Café Ñandú\n');
  });

  it('decodes ASCII chunks apart and the rest with the decoder, whatever the chunks (property)', async () => {
    // ASCII runs, characters of two to four bytes, a BOM where it is a character (not at the start).
    const piece = fc.oneof(
      fc.string({ unit: fc.constantFrom('a', ',', '\n', '1'), maxLength: 20 }),
      fc.constantFrom('é', 'Ñ', '€', '😀', '\ufeff'),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(piece, { maxLength: 12 }),
        fc.array(fc.integer({ min: 1, max: 9 }), { minLength: 1, maxLength: 8 }),
        fc.boolean(),
        async (pieces, sizes, bom) => {
          const content = `x${pieces.join('')}`;
          const bytes = Buffer.from(`${bom ? '\ufeff' : ''}${content}`);
          const chunks: Buffer[] = [];
          for (let at = 0, i = 0; at < bytes.length; at += sizes[i++ % sizes.length]!)
            chunks.push(bytes.subarray(at, at + sizes[i % sizes.length]!));
          expect(await text(await openInput('-', io(chunks)))).toBe(content);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('decodes a large read in slices: characters cut between slices, and a bad byte in a later one', async () => {
    // "é" across the first 32 KB boundary, "€" across the second; reads are 256 KB.
    const content = `${'a'.repeat(32 * 1024 - 1)}é${'b'.repeat(32 * 1024 - 3)}€${'c\n'.repeat(100_000)}`;
    expect(await text(await openInput(file('slices.csv', content), io()))).toBe(content);
    const bytes = Buffer.from(content);
    bytes[100_000] = 0xff;
    const err = await failure(text(await openInput(file('slices-bad.csv', bytes), io())));
    expect(err.message).toContain('byte 0xFF at offset 100000');
  });

  it('decodes in slices of the size asked for: chunks of at most that many characters, whole characters, the same text', async () => {
    const content = `${'x,1\n'.repeat(5000)}é€😀${'y,2\n'.repeat(3000)}`;
    const input = await openInput(file('slices-small.csv', content), io(), { sliceBytes: 8192 });
    const chunks: string[] = [];
    for await (const chunk of input.stream) chunks.push(chunk as string);
    expect(chunks.join('')).toBe(content);
    expect(Math.max(...chunks.map((c) => c.length))).toBeLessThanOrEqual(8192);
    expect(chunks.length).toBeGreaterThanOrEqual(Math.ceil(Buffer.byteLength(content) / 8192));
    const whole = await openInput(file('slices-default.csv', content), io());
    let largest = 0;
    for await (const chunk of whole.stream) largest = Math.max(largest, (chunk as string).length);
    expect(largest).toBeGreaterThan(8192);
  });

  it('reads files of many reads whole and in order, plain and gzipped, as the bytes are (property)', async () => {
    // A regular file's reads share one buffer: a chunk kept past the next read would come out
    // overwritten. Sizes past several reads (256 KB each, compressed too: the text is random),
    // characters of 1 to 4 bytes anywhere.
    const alphabet = ['a', 'Z', '0', ',', '\n', '"', '\u00e9', '\u20ac', '\u{1f600}', ' '];
    let n = 0;
    await fc.assert(
      fc.asyncProperty(fc.integer(), fc.integer({ min: 300_000, max: 700_000 }), async (seed, size) => {
        let state = seed >>> 0;
        const parts: string[] = [];
        for (let i = 0; i < size; i++) {
          state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
          parts.push(alphabet[state >>> 28 < alphabet.length ? state >>> 28 : 0]!);
        }
        const content = parts.join('');
        expect(await text(await openInput(file(`many-${n}.csv`, content), io()))).toBe(content);
        // Compressed, the file must still take several reads: the text is doubled with a twist.
        const twice = content + Array.from(content).reverse().join('');
        expect(await text(await openInput(file(`many-${n}.csv.gz`, gzipSync(twice)), io()))).toBe(twice);
        n++;
      }),
      { numRuns: 6 },
    );
  });

  it('finds a bad byte several reads in, by its offset and line', async () => {
    const line = 'a,b,\u00e9t\u00e9\n';
    const bytes = Buffer.from(line.repeat(120_000));
    const at = bytes.length - 1000 - (bytes.length % 7);
    bytes[at] = 0xff;
    const err = await failure(text(await openInput(file('late-bad.csv', bytes), io())));
    expect(err.message).toContain(`byte 0xFF at offset ${at}`);
    // Past the first MiB lines are not counted: the hint gives the command that counts them, and it does.
    const command = /its line: (.*)$/.exec(err.hint ?? '')?.[1];
    expect(command).toBeDefined();
    const expected = bytes.subarray(0, at).toString('latin1').split('\n').length;
    expect(execFileSync('sh', ['-c', command!], { cwd: dir, encoding: 'utf8' }).trim()).toBe(String(expected));
    // Gzipped, the offset is into the text: the command inflates first.
    const gz = await failure(text(await openInput(file('late-bad.csv.gz', gzipSync(bytes)), io())));
    const gzCommand = /its line: (.*)$/.exec(gz.hint ?? '')?.[1];
    expect(gzCommand).toContain('gzip -dc');
    expect(execFileSync('sh', ['-c', gzCommand!], { cwd: dir, encoding: 'utf8' }).trim()).toBe(String(expected));
  });

  it('decodes UTF-16 little-endian with a BOM (spreadsheet "Unicode text")', async () => {
    const source = await openInput(file('utf16.txt', Buffer.from('\ufeffzip\r\n02134\r\n', 'utf16le')), io());
    expect(await text(source)).toBe('zip\r\n02134\r\n');
  });

  it('refuses UTF-16 without a byte-order mark, naming the encoding to give, and reads it once named', async () => {
    const name = file('utf16-no-bom.csv', Buffer.from('Employer Name\r\nAcme Corp\r\n', 'utf16le'));
    const err = await failure(text(await openInput(name, io())));
    expect(err.message).toBe(
      'utf16-no-bom.csv: is UTF-16LE text without a byte-order mark (a NUL byte beside every character), not UTF-8',
    );
    expect(err.hint).toBe('name its encoding: --encoding utf-16le');
    // A character beyond ASCII (ë is EB 00) makes the bytes invalid UTF-8 before any NUL is looked for.
    const accent = file('utf16-accent.csv', Buffer.from('Name\r\nZoë\r\n', 'utf16le'));
    expect((await failure(text(await openInput(accent, io())))).message).toContain(
      'is UTF-16LE text without a byte-order mark',
    );
    const be = file('utf16be-no-bom.csv', Buffer.from('Employer Name\r\n', 'utf16le').swap16());
    expect((await failure(text(await openInput(be, io())))).message).toContain('is UTF-16BE text');
    const named = await openInput(name, { ...io(), input: { encoding: 'utf-16le' as const } });
    expect(await text(named)).toBe('Employer Name\r\nAcme Corp\r\n');
  });

  it('refuses a NUL byte anywhere, by its line (and offset, past the first read), as a damaged file', async () => {
    const early = file('nul-early.csv', 'ssn\n123456789\n12345\u00006789\n');
    expect((await failure(text(await openInput(early, io())))).message).toBe(
      'nul-early.csv: contains a NUL byte (line 3): text never does, so the file is damaged or not text',
    );
    // Zeros a crash left at the end of a long ASCII export (read past the first slice, undecoded).
    const lines = 'C1,L1,P1,12.50\n'.repeat(20_000);
    const late = file('nul-late.csv', Buffer.concat([Buffer.from(lines), Buffer.alloc(64)]));
    const err = await failure(text(await openInput(late, io())));
    expect(err.message).toBe(
      `nul-late.csv: contains a NUL byte (line 20001, offset ${lines.length}): text never does, so the file is damaged or not text`,
    );
    // As UTF-16 (named), a NUL character is refused the same way.
    const wide = file('nul-wide.csv', Buffer.from('a\r\nb\u0000c\r\n', 'utf16le'));
    const wideErr = await failure(text(await openInput(wide, { ...io(), input: { encoding: 'utf-16le' as const } })));
    expect(wideErr.message).toBe(
      'nul-wide.csv: contains a NUL byte (line 2): text never does, so the file is damaged or not text',
    );
  });

  it('gives empty text for an empty file', async () => {
    expect(await text(await openInput(file('empty.txt', ''), io()))).toBe('');
  });

  it('refuses a missing file before reading, naming it (exit 2)', async () => {
    const err = await failure(openInput('nope.csv', io()));
    expect(err.exitCode).toBe(2);
    expect(err.message).toBe('nope.csv: no such file');
  });

  it('refuses a directory', async () => {
    const err = await failure(openInput('.', io()));
    expect(err.message).toContain('is a directory');
  });

  const fixture = (name: string) => readFileSync(new URL(`../../../fixtures/spreadsheet/${name}`, import.meta.url));

  it.each(['ssns.xlsx', 'ssns.xls'])(
    'refuses an Excel workbook (%s) by its first bytes, before any decoding',
    async (name) => {
      for (const encoding of [undefined, 'latin1'] as const) {
        const err = await failure(openInput(file(`book-${name}.csv`, fixture(name)), { ...io(), input: { encoding } }));
        expect(err.message).toBe(
          `book-${name}.csv: is an Excel workbook, not a CSV file: in Excel use File > Save As > CSV UTF-8 (comma delimited) and give leadctl that file`,
        );
        expect(err.exitCode).toBe(2);
      }
      const piped = await failure(openInput('-', io([fixture(name)])));
      expect(piped.message).toMatch(/^stdin: is an Excel workbook, not a CSV file/);
    },
  );

  it('closes the file however the reading ends: refused at once, read whole, stopped early, or never read', async () => {
    const open = () => readdirSync('/proc/self/fd').length;
    const before = open();
    for (let i = 0; i < 5; i++) {
      await failure(openInput(file('book-closed.csv', fixture('ssns.xlsx')), io()));
      await text(await openInput(file('whole.csv', 'a,b\n'.repeat(200_000)), io()));
      const source = await openInput(file('early.csv', 'a,b\n'.repeat(200_000)), io());
      for await (const _chunk of source.stream) break;
      // A caller that gives up before reading (an unwritable rejects file) destroys the stream.
      (await openInput(file('unread.csv', 'a,b\n'.repeat(200_000)), io())).stream.destroy();
      (await peekText(await openInput(file('peeked.csv', 'a,b\n'.repeat(200_000)), io()))).input.stream.destroy();
    }
    // A stopped stream closes its file as it is destroyed, a moment later; a handle left to the
    // garbage collector would still be open after any wait (and warn when collected).
    for (let waited = 0; open() !== before && waited < 5000; waited += 20) await new Promise((r) => setTimeout(r, 20));
    expect(open()).toBe(before);
  });

  it('tells an OpenDocument spreadsheet and a plain ZIP archive from an Excel workbook', async () => {
    expect(notAWorkbook('a.ods', fixture('ssns.ods'))?.message).toMatch(
      /^a\.ods: is an OpenDocument spreadsheet, not a CSV file: in LibreOffice use File > Save As > Text CSV/,
    );
    const zip = Buffer.concat([
      Buffer.from([0x50, 0x4b, 3, 4]),
      Buffer.alloc(22),
      Buffer.from([7, 0, 0, 0]),
      Buffer.from('ssn.csv'),
    ]);
    expect(notAWorkbook('a.zip', zip)?.message).toBe(
      'a.zip: is a ZIP archive, not a CSV file: unzip it and give leadctl the CSV file inside',
    );
    expect(notAWorkbook('a.csv', Buffer.from('PK,name\n'))).toBeUndefined();
    expect(notAWorkbook('a.csv', Buffer.from([0xd0, 0xcf]))).toBeUndefined();
  });

  it('refuses bytes that are not UTF-8 instead of replacing them', async () => {
    const source = await openInput(file('latin1.csv', Buffer.from('name\nCaf\xe9\n', 'latin1')), io());
    const err = await failure(text(source));
    expect(err.message).toMatch(/^latin1\.csv: is not UTF-8 text/);
    expect(err.hint).toContain('UTF-8');
  });

  it('names the offset and line of the first byte that is not UTF-8', async () => {
    // The é of Windows-1252 is byte 16 (counting from 0), on line 2.
    const content = Buffer.from('customer_name,x\n\xe9lan,1\n', 'latin1');
    expect(content[16]).toBe(0xe9);
    const err = await failure(text(await openInput(file('cp1252.csv', content), io())));
    expect(err.message).toBe('cp1252.csv: is not UTF-8 text: byte 0xE9 at offset 16 (line 2) is not valid UTF-8');
    // The same bytes fed one at a time: the offset does not depend on how the input is chunked.
    const split = await failure(text(await openInput('-', io([...content].map((b) => Buffer.from([b]))))));
    expect(split.message).toContain('byte 0xE9 at offset 16 (line 2)');
  });

  it('finds a bad byte after a valid multi-byte character cut across chunks, and a sequence cut by the end', async () => {
    const good = Buffer.from('Caf\u00e9\n');
    const bad = Buffer.concat([good, Buffer.from([0x41, 0xc3, 0x28])]);
    const chunks = [bad.subarray(0, 4), bad.subarray(4, 9), bad.subarray(9)];
    const err = await failure(text(await openInput('-', io(chunks))));
    expect(err.message).toContain('byte 0xC3 at offset 7 (line 2)');
    const cut = Buffer.concat([good, Buffer.from([0xe2, 0x82])]);
    const end = await failure(text(await openInput('-', io([cut]))));
    expect(end.message).toContain('byte 0xE2 at offset 6 (line 2)');
  });

  it("finds the first invalid UTF-8 sequence by the decoder's rules", () => {
    expect(firstInvalidUtf8(Buffer.from('plain ascii\n'), true)).toBe(-1);
    expect(firstInvalidUtf8(Buffer.from('Ñandú €𝄞'), true)).toBe(-1);
    expect(firstInvalidUtf8(Buffer.from([0x41, 0xc0, 0x80]), true)).toBe(1); // overlong
    expect(firstInvalidUtf8(Buffer.from([0x41, 0xed, 0xa0, 0x80]), true)).toBe(1); // surrogate
    expect(firstInvalidUtf8(Buffer.from([0xf4, 0x90, 0x80, 0x80]), true)).toBe(0); // above U+10FFFF
    expect(firstInvalidUtf8(Buffer.from([0x41, 0xe2, 0x82]), false)).toBe(-1); // may go on in the next chunk
    expect(firstInvalidUtf8(Buffer.from([0x41, 0xe2, 0x82]), true)).toBe(1);
  });

  it('reports a truncated gzip file as an input error', async () => {
    const whole = gzipSync('123456789\n'.repeat(1000));
    const source = await openInput(file('cut.gz', whole.subarray(0, whole.length - 20)), io());
    const err = await failure(text(source));
    expect(err.message).toMatch(/^cut\.gz: is not a complete gzip file/);
  });
});

const posix = process.platform !== 'win32';

/** A FIFO in the test folder (mkfifo(1): Node has no call for it). */
function fifo(name: string): string {
  execFileSync('mkfifo', [join(dir, name)]);
  return name;
}

describe('inputs that can wait for ever, or never end', () => {
  it.runIf(posix)('reads a FIFO once a writer comes, and ends when it closes', async () => {
    const name = fifo('later.fifo');
    const opened = openInput(name, io());
    const writer = spawn('sh', ['-c', `sleep 0.2; printf 'a\\nb\\n' > '${join(dir, name)}'`]);
    // Listened for at once: the writer may be done before the reading is.
    const written = once(writer, 'close');
    expect(await text(await opened)).toBe('a\nb\n');
    await written;
  });

  it.runIf(posix)('stops reading a FIFO nobody writes to when the signal is aborted, with its reason', async () => {
    const controller = new AbortController();
    const opening = openInput(fifo('silent.fifo'), io(), { signal: controller.signal });
    setTimeout(() => controller.abort(new InterruptedError('SIGTERM')), 50);
    await expect(opening).rejects.toBeInstanceOf(InterruptedError);
  });

  it('stops reading standard input that never ends, mid-stream, with the reason', async () => {
    const controller = new AbortController();
    const stdin = new Readable({ read() {} });
    stdin.push('first\n');
    const source = await openInput('-', { cwd: dir, stdin }, { signal: controller.signal });
    const iterator = source.stream[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toBe('first\n');
    setTimeout(() => controller.abort(new InterruptedError('SIGINT')), 20);
    await expect(iterator.next()).rejects.toMatchObject({ exitCode: 130 });
  });

  it('reads a regular file to its end whatever the signal (a run can still account for it)', async () => {
    const controller = new AbortController();
    controller.abort(new InterruptedError('SIGTERM'));
    const source = await openInput(file('whole.txt', 'x\ny\n'), io(), { signal: controller.signal });
    expect(await text(source)).toBe('x\ny\n');
  });

  it('holds a document read whole only up to its limit', async () => {
    const source = await openInput('-', io([Buffer.from('a'.repeat(40)), Buffer.from('b'.repeat(40))]));
    const err = await failure(readWholeText(source, 64, 'keep it short'));
    expect(err.message).toBe('stdin: is larger than 64 characters of text; a file read whole is limited to that');
    expect(err.hint).toBe('keep it short');
    expect(await readWholeText(await openInput('-', io([Buffer.from('{}')])), 64)).toBe('{}');
  });
});
