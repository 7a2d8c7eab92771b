import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { UsageError } from '../errors.js';
import { writeFileSafely } from '../io/safe-file.js';
import { resolveZone } from '../ingest/mapping/datetime.js';
import { starterMapping, type FileRole, type SampledFile } from '../ingest/mapping/init.js';
import { openInput } from '../ingest/sources.js';
import { checkHeaderNames, chooseDelimiter, tableBatches } from '../ingest/table/reader.js';
import type { CommandContext } from './context.js';

/** `mapping init`: sample each file's header and first rows, then print or write the starter mapping. */
export async function runMappingInit(
  ctx: CommandContext,
  files: string[],
  opts: { out?: string; force?: boolean; timeZone?: string; sampleRows: number; loans?: string; payments?: string },
): Promise<number> {
  const inputs: { file: string; role?: FileRole }[] = [
    ...files.map((file) => ({ file })),
    ...(opts.loans === undefined ? [] : [{ file: opts.loans, role: 'loans' as const }]),
    ...(opts.payments === undefined ? [] : [{ file: opts.payments, role: 'payments' as const }]),
  ];
  if (inputs.length === 0)
    throw new UsageError('name the CSV exports to read: mapping init FILE... (or --loans FILE --payments FILE)', {
      hint: 'e.g. `leadctl mapping init export.csv --out mapping.json`',
    });
  if (opts.timeZone !== undefined && !resolveZone(opts.timeZone))
    throw new UsageError(`--time-zone: "${opts.timeZone}" is not a time zone (use an IANA name like America/Chicago)`, {
      hint: 'e.g. --time-zone America/Chicago, --time-zone America/New_York or --time-zone UTC',
    });
  if (!Number.isInteger(opts.sampleRows) || opts.sampleRows < 0)
    throw new UsageError('--sample-rows takes a whole number', { hint: 'e.g. --sample-rows 500 (the default is 200)' });
  const target = opts.out ? resolve(ctx.io.cwd, opts.out) : undefined;
  if (target && existsSync(target) && !opts.force)
    throw new UsageError(`${opts.out} exists; pass --force to overwrite it`, {
      hint: `add --force to replace ${opts.out}, or give --out another file`,
    });
  const sampled: SampledFile[] = [];
  for (const { file, role } of inputs)
    sampled.push({ ...(await sample(ctx, file, opts.sampleRows)), ...(role ? { role } : {}) });
  const starter = starterMapping(sampled, opts.timeZone);
  const text = JSON.stringify(starter.mapping, null, 2) + '\n';
  if (target) writeFileSafely(target, text, { what: '--out' });
  else await ctx.output.write(text);

  const log = (line: string) => ctx.io.stderr.write(line + '\n');
  const mappedCount = ['customer', 'loan', 'payment'].reduce(
    (n, level) => n + Object.keys((starter.mapping as Record<string, object | undefined>)[level] ?? {}).length,
    0,
  );
  log(`mapped ${mappedCount} field${mappedCount === 1 ? '' : 's'}${target ? `; wrote ${opts.out}` : ''}`);
  if (starter.unmatched.length)
    log(
      `columns not matched to any field (map them by hand, or leave them out): ${starter.unmatched.map((c) => `"${c}"`).join(', ')}`,
    );
  if (starter.missingRequired.length) log(`required fields with no column yet: ${starter.missingRequired.join(', ')}`);
  for (const [field, codes] of Object.entries(starter.codesToFill))
    log(`${field}: fill in the API value for the codes ${codes.map((c) => `"${c}"`).join(', ')}`);
  for (const note of starter.notes) log(note);
  return 0;
}

async function sample(ctx: CommandContext, file: string, rows: number): Promise<SampledFile> {
  const { delimiter, input } = await chooseDelimiter(await openInput(file, ctx.io), ctx.io.input?.delimiter);
  const records: string[][] = [];
  const batches = tableBatches(input, { delimiter });
  try {
    for await (const batch of batches) {
      for (const { cells } of batch) if (records.length <= rows) records.push(cells);
      if (records.length > rows) break;
    }
  } finally {
    await batches.return(undefined);
    input.stream.destroy();
  }
  checkHeaderNames(input.name, records[0]!);
  return { name: input.name, header: records[0]!, rows: records.slice(1), delimiter };
}
