import type { ListType } from '../../schema/index.js';

/**
 * The form a value is compared in when a lead is checked against the lists: email
 * addresses, employer names and affiliate ids ignore case and surrounding spaces; the
 * digit types are compared as they are (they are validated to be digits only), except
 * that a ZIP+4 is compared by its first five digits.
 */
export function matchKey(type: ListType, value: string): string {
  switch (type) {
    case 'Email Addresses':
    case 'Employer Names':
    case 'Affiliates':
      return value.trim().toLowerCase();
    case 'ZIP Codes':
      return value.trim().slice(0, 5);
    default:
      return value.trim();
  }
}
