import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromium, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBinary } from '../helpers/binary.js';
import { startSandboxProcess, type TestSandbox } from '../helpers/sandbox.js';
import { FIXTURES, pushEnv } from '../e2e/push-helpers.js';
import { ROOT } from '../e2e/service-env.js';
import { scratchDir } from '../helpers/scratch.js';

/**
 * The report as people see it: Debian's Chromium (.ci/run installs it) opens the file a push
 * wrote against the sandbox, on a phone's width and a desktop's, with nothing allowed to load.
 */

const CHROMIUM = '/usr/bin/chromium';
const hasChromium = existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(
    `NOTICE: ${CHROMIUM} not found: the browser test of the HTML report is skipped (apt-get install chromium; .ci/run does it as root)`,
  );

const SHOTS = join(ROOT, '.tmp', 'report-screenshots');
const HOSTILE_ID = `<script>document.title='pwned'</script>`;
const HOSTILE_AMOUNT = `<img src=x onerror="document.title='pwned'">`;

const work = mkdtempSync(join(tmpdir(), 'leadctl-browser-'));
let sandbox: TestSandbox;
let browser: BrowserContext;
/** The night as cron runs it (one request in five fails at first), and one with markup in the export. */
const runs: Record<'night' | 'hostile', { report: string; summary: any }> = {} as never;

async function push(name: 'night' | 'hostile', file: string, cwd: string): Promise<void> {
  const report = join(work, `${name}.html`);
  const res = await runBinary(
    [
      'customers',
      'batch',
      file,
      '--mapping',
      join(FIXTURES, 'mapping.json'),
      '--chunk-size',
      '2',
      '--concurrency',
      '2',
      '--rejects',
      join(work, `${name}-rejects.csv`),
      '--report',
      report,
      '-o',
      'json',
    ],
    { env: pushEnv(sandbox), cwd },
  );
  expect(res.code, res.stderr).toBe(4);
  runs[name] = { report, summary: JSON.parse(res.stdout) };
}

beforeAll(async () => {
  if (!hasChromium) return;
  sandbox = await startSandboxProcess(['--fail-rate', '0.25', '--random-seed', '11', '--latency', '40']);
  await push('night', 'export.csv', FIXTURES);
  const hostile = join(work, 'hostile');
  mkdirSync(hostile);
  copyFileSync(join(FIXTURES, 'export.csv'), join(hostile, 'export.csv'));
  const csv = `${readFileSync(join(FIXTURES, 'export.csv'), 'utf8').trimEnd()}\n"${HOSTILE_ID}",LN-9999,509999,Y,N,PDL,CUR,"${HOSTILE_AMOUNT.replace(/"/g, '""')}",$400.00,2/1/2026,1/15/2026 3:30 PM,,,,,,,,,,,,,,,,\n`;
  writeFileSync(join(hostile, 'export.csv'), csv);
  await push('hostile', 'export.csv', hostile);
  mkdirSync(SHOTS, { recursive: true });
  browser = await chromium.launchPersistentContext(scratchDir('leadctl-chromium-'), {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await sandbox?.stop();
  rmSync(work, { recursive: true, force: true });
});

interface Opened {
  page: Page;
  requests: string[];
  problems: string[];
}

/** Opens a report at a width, recording every request, console error, page error and dialog. */
async function open(file: string, width: number): Promise<Opened> {
  const page = await browser.newPage();
  await page.setViewportSize({ width, height: 900 });
  const requests: string[] = [];
  const problems: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('console', (m) => {
    if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, requests, problems };
}

const number = (text: string | null) => Number((text ?? '').replace(/,/g, ''));

describe('the HTML report in Chromium', () => {
  for (const width of [375, 1280]) {
    it.runIf(hasChromium)(
      `at ${width} px: loads nothing, logs no error, fits the width, shows the summary's figures`,
      async () => {
        const { report, summary } = runs.night;
        const { page, requests, problems } = await open(report, width);
        try {
          expect(requests).toEqual([pathToFileURL(report).href]);
          expect(problems).toEqual([]);
          // A string, evaluated in the page (this file is type-checked without the DOM's types).
          const size = (await page.evaluate(
            '({ scroll: document.documentElement.scrollWidth, client: document.documentElement.clientWidth })',
          )) as { scroll: number; client: number };
          expect(size.scroll).toBeLessThanOrEqual(size.client);
          const text = (id: string) => page.getByTestId(id).first().textContent();
          expect(await text('command')).toBe('customers batch');
          expect(number(await text('exit-code'))).toBe(summary.exit_code);
          expect(await text('exit-words')).toBe('some records were rejected');
          expect(await text('status')).toBe('completed, with rejected records (see the rejects file)');
          expect(number(await text('rows-read'))).toBe(summary.rows_read);
          expect(number(await text('rejects-total'))).toBe(summary.rejects);
          for (const level of ['customers', 'loans', 'payments']) {
            const l = summary[level];
            expect(number(await text(`acc-${level}-read`))).toBe(l.read);
            expect(number(await text(`acc-${level}-accepted`))).toBe(l.accepted);
            expect(number(await text(`acc-${level}-rejected`))).toBe(l.rejected);
            expect(number(await text(`acc-${level}-accounted-for`))).toBe(summary.accounting[level].accounted_for);
          }
          expect(number(await text('acc-payments-duplicates'))).toBe(summary.payments.duplicates);
          expect(await text('balanced')).toMatch(/^Balanced/);
          const counts = await page.getByTestId('reason-count').allTextContents();
          expect(counts.map(number).reduce((a, b) => a + b, 0)).toBe(summary.rejects);
          expect(number(await text('http-retries'))).toBe(summary.retries);
          expect(summary.retries).toBeGreaterThan(0);
          expect(await text('base-url')).toBe(sandbox.baseUrl);
          expect(await text('input-sha256-0')).toMatch(/^[0-9a-f]{64}$/);
          await expect(page.getByTestId('chart').isVisible()).resolves.toBe(true);
          await page.screenshot({ path: join(SHOTS, `report-${width}.png`), fullPage: true });
        } finally {
          await page.close();
        }
      },
    );
  }

  it.runIf(hasChromium)('shows markup from the export as text: nothing of it runs or loads', async () => {
    const { report, summary } = runs.hostile;
    const { page, requests, problems } = await open(report, 1280);
    try {
      expect(requests).toEqual([pathToFileURL(report).href]);
      expect(problems).toEqual([]);
      expect(await page.title()).toMatch(/^leadctl customers batch: /);
      expect(await page.locator('main script, main img').count()).toBe(0);
      const body = await page.locator('main').textContent();
      expect(body).toContain(HOSTILE_ID);
      expect(body).toContain('<img src=x onerror=');
      expect(number(await page.getByTestId('rejects-total').textContent())).toBe(summary.rejects);
      await page.screenshot({ path: join(SHOTS, 'report-hostile.png'), fullPage: true });
    } finally {
      await page.close();
    }
  });
});
