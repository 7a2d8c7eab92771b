import { exitCodeWords, type RunFacts, type RunRecord, type SlowRequest } from './run-report.js';
import { count } from './words.js';

/**
 * A run's report as one HTML file that loads nothing: inline CSS, inline SVG, no script, and a
 * Content-Security-Policy that forbids any load, so that a mail client's preview, a browser on a
 * phone or an archived copy shows the same thing years later. Every value is escaped (an input
 * file may hold `<script>`). Size is bounded by the facts and the record, both capped upstream.
 */

const CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const e = escapeHtml;
const n = (x: number) => x.toLocaleString('en-US');

/** `120 ms`, `3.4 s`, `1 min 12 s`, `2 h 05 min`. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 10) return `${s.toFixed(1)} s`;
  if (s < 60) return `${Math.round(s)} s`;
  const total = Math.round(s);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const r = total % 60;
  return h > 0 ? `${h} h ${String(m).padStart(2, '0')} min` : `${m} min ${String(r).padStart(2, '0')} s`;
}

export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${n(bytes)} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`;
}

function utc(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace('T', ' ')
    .replace(/\.\d{3}Z$/, ' UTC');
}

function slug(text: string): string {
  return text
    .toLowerCase()
    .replace(/\(.*?\)/g, '')
    .trim()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');
}

function tone(exitCode: number): 'ok' | 'warn' | 'fail' {
  if (exitCode === 0) return 'ok';
  if (exitCode === 4) return 'warn';
  return 'fail';
}

const STYLE = `
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f4f5f7;color:#1d2330;font:15px/1.5 -apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:960px;margin:0 auto;padding:16px}
h1{font-size:1.5em;margin:.1em 0 .2em}
h2{font-size:1.1em;margin:0 0 .6em}
h3{font-size:1em;margin:.8em 0 .3em}
section,header.run{background:#fff;border:1px solid #dde1e7;border-radius:8px;padding:14px 16px;margin:0 0 14px}
header.run{border-left:6px solid #888}
header.ok{border-left-color:#1f8a4c}header.warn{border-left-color:#c27c0e}header.fail{border-left-color:#c0392b}
.eyebrow{margin:0;color:#5b6475;font-size:.85em;text-transform:uppercase;letter-spacing:.04em}
.badge{display:inline-block;border-radius:4px;padding:0 6px;font-size:.85em;font-weight:600;letter-spacing:0;text-transform:none}
.prod{background:#c0392b;color:#fff}
.status{font-size:1.1em;margin:.2em 0}
.exit{margin:.2em 0;color:#3b4352}
.ok .verdict{color:#1f8a4c}.warn .verdict{color:#a86a07}.fail .verdict{color:#c0392b}
dl.facts{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:2px 14px;margin:0}
dl.facts dt{color:#5b6475}
dl.facts dd{margin:0;overflow-wrap:anywhere}
code{font:13px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;word-break:break-all}
table{border-collapse:collapse;width:100%;table-layout:fixed}
th,td{padding:4px 6px;border-bottom:1px solid #eceff3;text-align:right}
td{overflow-wrap:anywhere}
th:first-child,td:first-child{text-align:left}
thead th{color:#5b6475;font-weight:600}
tr.total td{font-weight:600;border-top:2px solid #c9ced6}
.good{color:#1f8a4c;font-weight:600}.bad{color:#c0392b;font-weight:600}
.input{border-top:1px solid #eceff3;padding-top:8px;margin-top:8px}
.input:first-of-type{border-top:0;margin-top:0;padding-top:0}
.reason{border-top:1px solid #eceff3;padding:8px 0 2px}
.reason p{margin:0;display:flex;gap:10px;align-items:baseline}
.count{flex:0 0 auto;min-width:2.5em;font-weight:700;text-align:right}
.reason p span:last-child{flex:1 1 auto;min-width:0;overflow-wrap:anywhere}
.reason ul{margin:4px 0 0;padding-left:1.3em;color:#3b4352;font-size:.92em}
.reason li{overflow-wrap:anywhere}
.muted{color:#5b6475}
.chart svg{display:block;width:100%;max-width:760px;height:auto}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(130px,1fr));gap:8px;margin:10px 0}
.figure{background:#f7f8fa;border-radius:6px;padding:6px 8px}
.figure b{display:block;font-size:1.15em}
.figure span{color:#5b6475;font-size:.85em}
ul.notes{margin:0;padding-left:1.2em}
ul.notes li{overflow-wrap:anywhere}
footer{color:#5b6475;font-size:.85em;text-align:center;padding:4px 0 16px}
@media (max-width:480px){main{padding:8px}section,header.run{padding:10px}body{font-size:14px}th,td{padding:3px 3px}.chart svg text{font-size:20px}}
`;

/** The whole report. `version` is leadctl's. */
export function renderReportHtml(facts: RunFacts, record: RunRecord, version: string): string {
  const t = tone(facts.exitCode);
  const title = `leadctl ${facts.command}: ${facts.statusWords}`;
  const body = [
    header(facts, t),
    runSection(facts, record),
    inputsSection(facts),
    accountingSection(facts),
    deltaSection(facts),
    rejectsSection(facts),
    timelineSection(facts, record),
    filesSection(facts),
  ]
    .filter(Boolean)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${e(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
${body}
<footer>Written by leadctl ${e(version)} at ${e(utc(record.endedAt))}. This file loads nothing from the network.</footer>
</main>
</body>
</html>
`;
}

function header(f: RunFacts, t: string): string {
  const marker = f.production ? ' <span class="badge prod" data-testid="production">[production]</span>' : '';
  const mode = f.validateOnly ? ' <span class="badge" style="background:#e8ecf2">validate only</span>' : '';
  return `<header class="run ${t}">
<p class="eyebrow">leadctl run report${marker}${mode}</p>
<h1 data-testid="command">${e(f.command)}</h1>
<p class="status verdict" data-testid="status">${e(f.statusWords)}</p>
<p class="exit">Exit code <strong data-testid="exit-code">${e(f.exitCode)}</strong>: <span data-testid="exit-words">${e(exitCodeWords(f.exitCode))}</span></p>
${f.error ? `<p class="exit" data-testid="error"><strong>Error:</strong> ${e(f.error.message)}${f.error.hint ? `<br><span class="muted">Hint: ${e(f.error.hint)}</span>` : ''}</p>` : ''}
</header>`;
}

function runSection(f: RunFacts, r: RunRecord): string {
  const rows: [string, string][] = [
    [
      'Service',
      f.baseUrl
        ? `<code data-testid="base-url">${e(f.baseUrl)}</code>${f.production ? ' <span class="badge prod">[production]</span>' : ''}`
        : '<span class="muted">not resolved</span>',
    ],
    ['Profile', f.profile ? `<span data-testid="profile">${e(f.profile)}</span>` : '<span class="muted">none</span>'],
    ['Started', e(utc(r.startedAt))],
    ['Ended', e(utc(r.endedAt))],
    ['Duration', `<span data-testid="duration">${e(duration(r.endedAt - r.startedAt))}</span>`],
  ];
  if (f.rowsRead !== null) rows.push(['Rows read', `<span data-testid="rows-read">${n(f.rowsRead)}</span>`]);
  return `<section><h2>Run</h2>${dl(rows)}</section>`;
}

function dl(rows: [string, string][]): string {
  return `<dl class="facts">${rows.map(([k, v]) => `<dt>${e(k)}</dt><dd>${v}</dd>`).join('')}</dl>`;
}

function inputsSection(f: RunFacts): string {
  if (f.inputs.length === 0) return '';
  const items = f.inputs.map((i, index) => {
    const rows: [string, string][] = [
      [
        'Size',
        i.bytes === null
          ? '<span class="muted">unknown (not a file)</span>'
          : `${e(byteSize(i.bytes))} (${n(i.bytes)} bytes)`,
      ],
    ];
    if (i.rows !== null) rows.push(['Rows', `<span data-testid="input-rows-${index}">${n(i.rows)}</span>`]);
    rows.push([
      'SHA-256',
      i.sha256
        ? `<code data-testid="input-sha256-${index}">${e(i.sha256)}</code>${i.hashed === 'after the run' ? ' <span class="muted">(read again after the run)</span>' : ''}`
        : '<span class="muted">not taken</span>',
    ]);
    return `<div class="input"><h3><code data-testid="input-name-${index}">${e(i.name)}</code></h3>${dl(rows)}</div>`;
  });
  return `<section><h2>Input${f.inputs.length === 1 ? '' : 's'}</h2>${items.join('')}</section>`;
}

function accountingSection(f: RunFacts): string {
  const a = f.accounting;
  if (!a) return '';
  const head = `<thead><tr><th></th>${a.levels.map((l) => `<th>${e(l)}</th>`).join('')}</tr></thead>`;
  const cells = (label: string, values: number[]) =>
    values.map((v, i) => `<td data-testid="acc-${slug(a.levels[i]!)}-${slug(label)}">${n(v)}</td>`).join('');
  const rows = [
    `<tr><td>read</td>${cells('read', a.read)}</tr>`,
    ...a.parts.map((p, i) => `<tr><td>${i === 0 ? '=' : '+'} ${e(p.label)}</td>${cells(p.label, p.values)}</tr>`),
    `<tr class="total"><td>accounted for</td>${cells('accounted for', a.accountedFor)}</tr>`,
  ];
  const verdict = a.balanced
    ? '<p class="good" data-testid="balanced">Balanced: every record read is accounted for.</p>'
    : '<p class="bad" data-testid="balanced">Not balanced: the counts do not add up (a bug in leadctl; keep this report and the input).</p>';
  return `<section><h2>Accounting</h2><table>${head}<tbody>${rows.join('')}</tbody></table>${verdict}</section>`;
}

function deltaSection(f: RunFacts): string {
  const d = f.delta;
  if (!d) return '';
  const rows: [string, string][] = [
    [d.sentLabel, `<span data-testid="delta-sent">${n(d.sent)}</span>`],
    [d.unchangedLabel, `<span data-testid="delta-unchanged">${n(d.unchanged)}</span>`],
  ];
  if (d.removed !== undefined)
    rows.push(['values removed', `<span data-testid="delta-removed">${n(d.removed)}</span>`]);
  return `<section><h2>Delta</h2><p class="muted">${e(d.description)}</p>${dl(rows)}</section>`;
}

function rejectsSection(f: RunFacts): string {
  const r = f.rejects;
  if (!r) return '';
  const reasons = r.reasons.map(
    (
      x,
    ) => `<div class="reason" data-testid="reason"><p><span class="count" data-testid="reason-count">${n(x.count)}</span> <span data-testid="reason-text">${e(x.reason)}</span></p>
<ul>${x.examples.map((ex) => `<li>${e(ex)}</li>`).join('')}</ul></div>`,
  );
  const other =
    r.otherCount > 0
      ? `<div class="reason"><p><span class="count" data-testid="reason-other-count">${n(r.otherCount)}</span> <span class="muted">more, for ${n(r.otherReasons)}${r.otherReasonsOrMore ? ' or more' : ''} other reason${r.otherReasons === 1 && !r.otherReasonsOrMore ? '' : 's'} (${e(r.everyOne)})</span></p></div>`
      : '';
  return `<section><h2>${e(r.title)}</h2><p><strong data-testid="rejects-total">${n(r.total)}</strong> record${r.total === 1 ? '' : 's'}; the first few of each kind (values masked as on the terminal):</p>${reasons.join('')}${other}</section>`;
}

function timelineSection(f: RunFacts, r: RunRecord): string {
  const requests = Object.values(r.requests).reduce((a, b) => a + b, 0);
  const seconds = r.bucketMs / 1000;
  const peak = Math.max(0, ...r.buckets.map((b) => b.records / seconds));
  const total = r.buckets.reduce((a, b) => a + b.records, 0);
  const elapsed = Math.max(1, r.endedAt - r.startedAt) / 1000;
  const figures: [string, string, string][] = [
    ['requests', n(requests), 'answers and network errors (every attempt)'],
    ['2xx', n(r.requests['2xx']), 'answered 2xx'],
    ['4xx', n(r.requests['4xx']), 'answered 4xx'],
    ['5xx', n(r.requests['5xx']), 'answered 5xx'],
    ['network-errors', n(r.requests.network_error), 'network errors'],
    ['retries', n(r.retries), 'retries'],
    ['give-ups', n(r.giveUps), 'given up after retries'],
    ['bytes-sent', byteSize(r.bytesSent), 'request bodies sent'],
  ];
  const figureHtml = figures
    .map(
      ([id, value, label]) =>
        `<div class="figure"><b data-testid="http-${id}">${e(value)}</b><span>${e(label)}</span></div>`,
    )
    .join('');
  const summary = `${n(total)} ${f.unit} in ${duration(r.endedAt - r.startedAt)}: ${n(Math.round(total / elapsed))} ${f.unit}/s on average, ${n(Math.round(peak))}/s at the peak; ${n(r.retries)} ${r.retries === 1 ? 'retry' : 'retries'}.`;
  return `<section><h2>How the run went</h2>
<p>${e(summary)}</p>
<div class="chart">${chart(f, r)}</div>
<div class="figures">${figureHtml}</div>
${slowestTable(r.slowest)}
</section>`;
}

/**
 * Throughput as bars, and retries as a strip below on the same time axis. Labels sit above the
 * plots, with room for the larger type a phone gets (see the style's media query).
 */
function chart(f: RunFacts, r: RunRecord): string {
  const W = 640;
  const left = 56;
  const right = 8;
  const top = 34;
  const plotH = 120;
  const stripTop = top + plotH + 44;
  const stripH = 36;
  const H = stripTop + stripH + 30;
  const seconds = r.bucketMs / 1000;
  const buckets = r.buckets.length ? r.buckets : [{ records: 0, requests: 0, retries: 0 }];
  const rates = buckets.map((b) => b.records / seconds);
  const maxRate = niceCeil(Math.max(...rates));
  const maxRetries = Math.max(1, ...buckets.map((b) => b.retries));
  const plotW = W - left - right;
  const bw = plotW / buckets.length;
  const gap = bw > 4 ? 1 : 0;
  const bar = (i: number, y: number, h: number, fill: string) =>
    `<rect x="${(left + i * bw + gap / 2).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(0.5, bw - gap).toFixed(1)}" height="${h.toFixed(1)}" fill="${fill}"/>`;
  const bars = rates
    .map((v, i) => {
      const h = maxRate > 0 ? (v / maxRate) * plotH : 0;
      return h > 0 ? bar(i, top + plotH - h, h, '#3b6fd1') : '';
    })
    .join('');
  const retries = buckets
    .map((b, i) => {
      if (b.retries === 0) return '';
      const h = Math.max(3, (b.retries / maxRetries) * stripH);
      return bar(i, stripTop + stripH - h, h, '#c0392b');
    })
    .join('');
  const span = buckets.length * r.bucketMs;
  const grid = [0, 0.5, 1]
    .map((q) => {
      const y = top + plotH - q * plotH;
      return `<line x1="${left}" x2="${W - right}" y1="${y}" y2="${y}" stroke="#e3e6eb"/><text x="${left - 6}" y="${y + 4}" text-anchor="end">${e(short(maxRate * q))}</text>`;
    })
    .join('');
  const xLabels = [0, 0.5, 1]
    .map((q) => {
      const x = left + q * plotW;
      const anchor = q === 0 ? 'start' : q === 1 ? 'end' : 'middle';
      return `<text x="${x}" y="${H - 6}" text-anchor="${anchor}">${e(q === 0 ? '0 s' : duration(q * span))}</text>`;
    })
    .join('');
  const label = `${f.unit} per second over the run, and retries`;
  const retryNote = r.retries ? `retries (most: ${n(maxRetries)} in ${duration(r.bucketMs)})` : 'retries: none';
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" role="img" aria-label="${e(label)}" data-testid="chart" font-family="sans-serif" font-size="12" fill="#5b6475">
<title>${e(label)}</title>
<text x="0" y="${top - 14}">${e(f.unit)} per second</text>
${grid}
${bars}
<text x="0" y="${stripTop - 10}">${e(retryNote)}</text>
<line x1="${left}" x2="${W - right}" y1="${stripTop + stripH}" y2="${stripTop + stripH}" stroke="#c9ced6"/>
${retries}
${xLabels}
</svg>`;
}

function niceCeil(v: number): number {
  if (v <= 0) return 0;
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function short(v: number): string {
  if (v >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (v >= 1e4) return `${+(v / 1e3).toFixed(0)}k`;
  if (v >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return v >= 10 || v === 0 ? String(Math.round(v)) : String(+v.toFixed(1));
}

function slowestTable(slowest: SlowRequest[]): string {
  if (slowest.length === 0) return '<p class="muted">No request was sent.</p>';
  const rows = slowest.map((s) => {
    const what = s.chunk
      ? `request ${n(s.chunk.number)}: ${count(s.chunk.customers, 'customer')}, ${count(s.chunk.loans, 'loan')}, ${count(s.chunk.payments, 'payment')}`
      : `${s.method} ${s.path}`;
    const attempt = s.attempt > 1 ? ` (attempt ${s.attempt})` : '';
    return `<tr><td>${e(what)}${e(attempt)}</td><td>${e(s.status)}</td><td>${e(duration(s.durationMs))}</td><td>${e(duration(s.at))}</td></tr>`;
  });
  return `<h3>Slowest requests</h3><table data-testid="slowest"><thead><tr><th style="width:52%">request</th><th>status</th><th>took</th><th>at</th></tr></thead><tbody>${rows.join('')}</tbody></table>`;
}

function filesSection(f: RunFacts): string {
  if (f.files.length === 0 && f.notes.length === 0) return '';
  const files = f.files.length ? dl(f.files.map((x) => [x.label, `<code>${e(x.path)}</code>`])) : '';
  const notes = f.notes.length
    ? `<h3>Notes</h3><ul class="notes">${f.notes.map((x) => `<li>${e(x)}</li>`).join('')}</ul>`
    : '';
  return `<section><h2>Files${f.notes.length ? ' and notes' : ''}</h2>${files}${notes}</section>`;
}
