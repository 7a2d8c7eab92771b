#!/usr/bin/env node
import { main } from '../dist/cli/main.js';

const code = await main(process.argv.slice(2));
process.exitCode = code;
// A forgotten socket or timer must never keep a cron job hanging after its work is done.
setTimeout(() => process.exit(code), 1500).unref();
