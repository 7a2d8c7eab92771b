import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { PAGES_DIR, ROOT, renderCommandPages, renderEmbeds, staleEmbeds, stalePages } from './command-pages.js';

const temps: string[] = [];
afterEach(() => {
  for (const t of temps.splice(0)) rmSync(t, { recursive: true, force: true });
});

describe('docs/commands (generated from the commander definitions)', () => {
  it('is current: run `npm run docs` when this fails', async () => {
    expect(await stalePages(), 'docs/commands/ is stale: run `npm run docs` and commit the pages').toEqual([]);
  });

  it('has a page per command group with every subcommand, each as --help prints it', async () => {
    const pages = await renderCommandPages();
    const index = pages.get('README.md')!;
    for (const group of ['auth', 'lists', 'customers', 'leads', 'legacy', 'sandbox']) {
      expect(index).toContain(`(${group}.md)`);
      expect(pages.has(`${group}.md`)).toBe(true);
    }
    expect(pages.get('sandbox.md')).toContain('## leadctl sandbox start');
    expect(pages.get('sandbox.md')).toMatch(/--save-profile <name>/);
    expect(pages.get('lists.md')).toContain('## leadctl lists create');
  });

  it('notices a page that differs, is missing, or is left over', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'leadctl-pages-'));
    temps.push(dir);
    cpSync(PAGES_DIR, dir, { recursive: true });
    writeFileSync(
      join(dir, 'auth.md'),
      readFileSync(join(dir, 'auth.md'), 'utf8').replace('--client-id', '--client-identifier'),
    );
    rmSync(join(dir, 'demo.md'));
    writeFileSync(join(dir, 'gone.md'), '# leadctl gone\n');
    expect((await stalePages(dir)).sort()).toEqual(['auth.md', 'demo.md', 'gone.md']);
  });

  it('shows the cron script in docs/cron.md as it is in docs/cron/ (run `npm run docs` when this fails)', () => {
    expect(staleEmbeds(), 'a file shown in docs/ changed: run `npm run docs`').toEqual([]);
    const script = readFileSync(join(ROOT, 'docs', 'cron', 'leadctl-nightly.sh'), 'utf8');
    expect(renderEmbeds().get('cron.md')).toContain(script.trimEnd());
  });
});
