import { spawnSync } from 'node:child_process';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** `promtool` from Debian's prometheus package (.ci/run installs it), when this machine has it. */
export const hasPromtool = spawnSync('promtool', ['--version'], { stdio: 'ignore' }).status === 0;
if (!hasPromtool)
  console.warn('promtool not found (apt-get install prometheus): the metrics files are checked by the npm parser only');

/** `promtool check metrics`: the format, and Prometheus' own naming rules. */
export function promtoolCheck(text: string): { status: number | null; output: string } {
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/** Every sample as `name{label="v",…}` (labels sorted) → value. */
export function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const family of parsePrometheusTextFormat(text)) {
    for (const m of family.metrics) {
      const labels = Object.entries(m.labels ?? {})
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k}="${v}"`)
        .join(',');
      out.set(`${family.name}{${labels}}`, Number(m.value));
    }
  }
  return out;
}

/** The families with their type and the label names they use. */
export function families(text: string): { name: string; type: string; labels: Set<string> }[] {
  return parsePrometheusTextFormat(text).map((f) => ({
    name: f.name,
    type: f.type,
    labels: new Set(f.metrics.flatMap((m) => Object.keys(m.labels ?? {}))),
  }));
}
