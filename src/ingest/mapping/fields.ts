import { LEVEL_FIELDS, type FieldKind, type Level } from '../../schema/field-kinds.js';

// The field kinds live beside the schema (the batch quick check needs them); mapping re-exports them.
export { LEVEL_FIELDS, LEVELS, type FieldKind, type Level } from '../../schema/field-kinds.js';

/**
 * A payments file repeats the keys of its customer and loan. They default to the customer and
 * loan sections' columns; a payments file that names them differently maps them in `payment`.
 */
export const PAYMENT_JOIN_KEYS = ['customer_id', 'loan_id'] as const;

/** Fields every body that carries them requires (others are optional, or required only in some). */
export const REQUIRED_EVERYWHERE: ReadonlySet<string> = new Set([
  'customer_id',
  'loan_id',
  'payment_id',
  'loan_amount',
  'applied_at',
]);

/** The key field of each level: the LMS id. */
export const LEVEL_KEY: Record<Level, string> = { customer: 'customer_id', loan: 'loan_id', payment: 'payment_id' };

export function fieldKind(level: Level, field: string): FieldKind | undefined {
  if (level === 'payment' && (PAYMENT_JOIN_KEYS as readonly string[]).includes(field)) return { type: 'string' };
  return LEVEL_FIELDS[level][field];
}

export function describeKind(kind: FieldKind): string {
  switch (kind.type) {
    case 'string':
      return 'text';
    case 'id':
      return 'whole number';
    case 'cents':
      return 'money (integer cents)';
    case 'boolean':
      return 'yes/no';
    case 'date':
      return 'date YYYY-MM-DD';
    case 'datetime':
      return 'UTC datetime YYYY-MM-DDTHH:mm:ssZ';
    case 'enum':
      return `one of: ${kind.values.join(', ')}`;
  }
}
