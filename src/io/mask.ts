/**
 * Personal data and secrets in human output: SSNs and bank account numbers show their last
 * four characters only. (Secrets and tokens never show at all: src/redact.ts.)
 */

const MASK = '*';

/** Masks every letter and digit but the last `keep`, leaving separators where they were. */
export function maskAllButLast(value: string, keep = 4): string {
  const alnum = value.replace(/[^A-Za-z0-9]/g, '').length;
  let toMask = Math.max(0, alnum - keep);
  let out = '';
  for (const ch of value) {
    if (toMask > 0 && /[A-Za-z0-9]/.test(ch)) {
      out += MASK;
      toMask--;
    } else {
      out += ch;
    }
  }
  return out;
}

/** `123-45-6789` → `***-**-6789`; `123456789` → `*****6789`. */
export function maskSsn(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return maskAllButLast(String(value), 4);
}

/** `000123456789` → `********6789`. */
export function maskAccount(value: string | null | undefined): string {
  if (value === null || value === undefined) return '';
  return maskAllButLast(String(value), 4);
}

const NUMBER_RUN = /\d(?:[\d .-]*\d)?/g;
const LONG_NUMBER_DIGITS = 8;

/**
 * Text from an input file (a whole row, a header that may be a first data row): runs of eight or
 * more digits, separators allowed, show their last four only. A date written 2024-01-05 is such
 * a run too; in a file's row that is the price of never showing an SSN typed 123 45 6789.
 */
export function maskLongNumbers(text: string): string {
  return text.replace(NUMBER_RUN, (run) =>
    run.replace(/\D/g, '').length >= LONG_NUMBER_DIGITS ? maskAllButLast(run) : run,
  );
}

/**
 * Text of another program (the service's messages, commander's): an SSN as 123-45-6789 or
 * 123 45 6789, and runs of eight or more bare digits (an SSN, an account or card number) show
 * their last four only; dates, amounts and short ids stay as they are.
 */
export function maskPersonalNumbers(text: string): string {
  return text.replace(
    /(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])|(?<!\d ?)\d{3} \d{2} \d{4}(?! ?\d)|(?<![\d.])\d{8,}(?![\d.]*\d)/g,
    (run) => maskAllButLast(run),
  );
}
