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
