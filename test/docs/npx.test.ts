import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './command-pages.js';
import { walkthroughBlocks } from './walkthrough.js';

/**
 * Outside the clone, `npx leadctl` asks the public npm registry for a package named `leadctl`
 * (this one is not published) and runs whatever it finds: the docs may only send a reader to it
 * in the clone's folder.
 */
function pages(): string[] {
  const docs = join(ROOT, 'docs');
  const files = [join(ROOT, 'README.md')];
  for (const entry of readdirSync(docs, { recursive: true, withFileTypes: true }))
    if (entry.isFile() && /\.(md|sh)$/.test(entry.name)) files.push(join(entry.parentPath, entry.name));
  return files;
}

/** Each paragraph or fenced block that mentions `npx leadctl`, with the one before it. */
function mentions(text: string): Array<{ chunk: string; before: string }> {
  const chunks = text.split(/\n\s*\n/);
  return chunks.flatMap((chunk, i) => (/npx leadctl/.test(chunk) ? [{ chunk, before: chunks[i - 1] ?? '' }] : []));
}

describe('`npx leadctl` in the docs', () => {
  it('is only ever said to run in the clone', () => {
    const outside: string[] = [];
    for (const page of pages())
      for (const { chunk, before } of mentions(readFileSync(page, 'utf8')))
        if (!/\bclone\b|project folder/i.test(chunk + before)) outside.push(`${page.slice(ROOT.length + 1)}: ${chunk}`);
    expect(outside).toEqual([]);
    expect(mentions('We ran it.\n\nThen `npx leadctl demo` anywhere.')).toHaveLength(1);
  });

  it('is not in the walkthrough, which leaves the clone', () => {
    const blocks = walkthroughBlocks(readFileSync(join(ROOT, 'README.md'), 'utf8'));
    expect(blocks.length).toBeGreaterThan(5);
    expect(blocks.filter((b) => /\bnpx\b/.test(b.code))).toEqual([]);
  });
});
