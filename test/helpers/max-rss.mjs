// Preloaded into a leadctl run (node --import) by test/helpers/measured-run.ts: writes the
// process's peak resident set size (kilobytes) to LEADCTL_TEST_RSS_FILE when it exits.
import { writeFileSync } from 'node:fs';

const out = process.env.LEADCTL_TEST_RSS_FILE;
if (out) process.on('exit', () => writeFileSync(out, String(process.resourceUsage().maxRSS)));
