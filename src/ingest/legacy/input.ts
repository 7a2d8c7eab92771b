import { InputError } from '../../errors.js';
import type { IO } from '../../io/io.js';
import { openInput, readWholeText } from '../sources.js';
import { MAX_RECORD_CHARS } from '../table/reader.js';

/** How the leads were laid out in the file; the output mirrors it (one object, or a list). */
export type LegacyInputShape = 'object' | 'array' | 'ndjson';

export interface LegacyInputLead {
  /** 1-based position of the lead in the file. */
  number: number;
  /** 1-based line where the lead starts (NDJSON only: arrays and objects span lines). */
  line?: number;
  data: Record<string, unknown>;
}

export interface LegacyInput {
  /** File name as given, or `stdin`. */
  source: string;
  shape: LegacyInputShape;
  leads: LegacyInputLead[];
}

/** Four times the table reader's record limit: a lead file holds a handful of leads of a few KB. */
const MAX_LEAD_FILE_CHARS = 4 * MAX_RECORD_CHARS;

/**
 * Reads legacy leads from a file or `-` (stdin): one JSON object, a JSON array of objects, or
 * NDJSON. Lead files are small (a handful of test leads), so they are read whole, up to
 * MAX_LEAD_FILE_CHARS (a larger file is refused, never held whole).
 */
export async function readLegacyInput(path: string, io: Pick<IO, 'stdin' | 'cwd'>): Promise<LegacyInput> {
  const input = await openInput(path, io);
  const text = await readWholeText(
    input,
    MAX_LEAD_FILE_CHARS,
    'a lead file holds a few leads as JSON; post larger sets in several files',
  );
  return parseLegacyInput(text, input.name);
}

export function parseLegacyInput(raw: string, source: string): LegacyInput {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (text.trim() === '')
    throw new InputError('the lead file is empty: expected a JSON object, a JSON array or NDJSON', { file: source });

  let whole: unknown;
  let wholeError: Error | undefined;
  try {
    whole = JSON.parse(text);
  } catch (err) {
    wholeError = err as Error;
  }

  if (!wholeError) {
    if (Array.isArray(whole)) {
      if (whole.length === 0) throw new InputError('the JSON array holds no leads', { file: source });
      return {
        source,
        shape: 'array',
        leads: whole.map((item, i) => ({ number: i + 1, data: asLeadObject(item, source, `lead ${i + 1}`) })),
      };
    }
    return { source, shape: 'object', leads: [{ number: 1, data: asLeadObject(whole, source, 'the lead') }] };
  }

  const lines = text.split(/\r?\n/);
  const nonBlank = lines.filter((l) => l.trim() !== '').length;
  // One line (or a multi-line document) that does not parse is a broken JSON file, not NDJSON.
  if (nonBlank < 2 || !looksLikeNdjson(lines)) {
    throw new InputError(`not valid JSON: ${describeJsonError(wholeError, text)}`, { file: source });
  }
  const leads: LegacyInputLead[] = [];
  lines.forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (err) {
      throw new InputError(`line ${i + 1} is not valid JSON: ${describeJsonError(err as Error, line)}`, {
        file: source,
      });
    }
    const number = leads.length + 1;
    leads.push({ number, line: i + 1, data: asLeadObject(value, source, `line ${i + 1}`) });
  });
  return { source, shape: 'ndjson', leads };
}

/**
 * NDJSON: every non-blank line is itself a complete JSON object; or the first is, which no line of
 * a document spread over lines is (so that a later line cut short is named by its number).
 */
function looksLikeNdjson(lines: string[]): boolean {
  const objects = lines.every((l) => {
    const t = l.trim();
    return t === '' || (t.startsWith('{') && t.endsWith('}'));
  });
  if (objects) return true;
  const first = lines.find((l) => l.trim() !== '');
  try {
    const value: unknown = JSON.parse(first ?? '');
    return value !== null && typeof value === 'object' && !Array.isArray(value);
  } catch {
    return false;
  }
}

function asLeadObject(value: unknown, source: string, what: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const kind = value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value;
    throw new InputError(`${what} is ${kind}, expected a JSON object with the lead's fields`, { file: source });
  }
  return value as Record<string, unknown>;
}

/** JSON.parse's message, with the line and column people look for (V8 does not always give them). */
export function describeJsonError(err: Error, text: string): string {
  const message = err.message
    .replace(/, (\.\.\.)?".*is not valid JSON$/s, '')
    .replace(/ in JSON at position \d+.*$/s, '')
    .replace(/ at position \d+.*$/s, '');
  const pos = jsonErrorOffset(text);
  if (pos === undefined) return message;
  const before = text.slice(0, pos);
  const line = before.split('\n').length;
  const column = pos - before.lastIndexOf('\n');
  return `${message} at line ${line}, column ${column}`;
}

/** Offset of the first character where `text` stops being JSON (a small validating scanner). */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\r\n'.includes(text[i]!)) i++;
  };
  const fail = (): never => {
    throw i;
  };
  const literal = (word: string) => {
    for (const ch of word) if (text[i++] !== ch) i--, fail();
  };
  const string = () => {
    i++;
    while (i < text.length && text[i] !== '"') {
      if (text[i]! < ' ') fail();
      if (text[i] === '\\') {
        i++;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail();
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x')) fail();
      }
      i++;
    }
    if (text[i] !== '"') fail();
    i++;
  };
  const number = () => {
    const m = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(i));
    if (!m) fail();
    i += m![0].length;
  };
  const value = (): void => {
    ws();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail();
      }
    } else if (c === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail();
      }
    } else if (c === '"') string();
    else if (c === 't') literal('true');
    else if (c === 'f') literal('false');
    else if (c === 'n') literal('null');
    else number();
  };
  try {
    value();
    ws();
    return i < text.length ? i : undefined;
  } catch (at) {
    return typeof at === 'number' ? at : undefined;
  }
}
