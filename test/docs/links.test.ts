import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './command-pages.js';

function markdownFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? markdownFiles(path) : name.endsWith('.md') ? [path] : [];
  });
}

/** GitHub's anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchors(markdown: string): Set<string> {
  const found = new Set<string>();
  let fence = false;
  for (const line of markdown.split('\n')) {
    if (line.startsWith('```')) fence = !fence;
    const m = !fence && /^#{1,6} (.*)$/.exec(line);
    if (m)
      found.add(
        m[1]!
          .trim()
          .toLowerCase()
          .replace(/[^\w\- ]/g, '')
          .replace(/ /g, '-'),
      );
  }
  return found;
}

/** Links outside code: [text](target), without a scheme. */
function relativeLinks(markdown: string): string[] {
  const prose = markdown.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return [...prose.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!).filter((t) => !/^[a-z]+:/i.test(t));
}

const files = [join(ROOT, 'README.md'), ...markdownFiles(join(ROOT, 'docs'))];

describe('links in README.md and docs/', () => {
  it('finds the documents', () => {
    expect(files.length).toBeGreaterThan(10);
  });

  it.each(files.map((f) => [relative(ROOT, f), f]))(
    '%s: every relative link names a file (and heading) that exists',
    (_name, file) => {
      const text = readFileSync(file, 'utf8');
      const broken: string[] = [];
      for (const link of relativeLinks(text)) {
        const [path, anchor] = link.split('#') as [string, string | undefined];
        const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path));
        if (!existsSync(target)) broken.push(`${link} (no such file)`);
        else if (anchor && target.endsWith('.md') && !anchors(readFileSync(target, 'utf8')).has(anchor))
          broken.push(`${link} (no such heading)`);
      }
      expect(broken).toEqual([]);
    },
  );
});
