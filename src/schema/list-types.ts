/**
 * The list types and their command-line aliases, without zod: the list reader needs
 * them on every run, and loading zod costs a validate-only pass of a large file ~10%.
 */

/** The eight list types, spelled exactly as the service names them. */
export const LIST_TYPES = [
  'Affiliates',
  'Bank Routing Numbers',
  'Email Addresses',
  'Employer Names',
  'Telephone Numbers',
  'Social Security Numbers',
  'Last Four of Social Security Numbers',
  'ZIP Codes',
] as const;
export type ListType = (typeof LIST_TYPES)[number];

/** Short names operators type on the command line. */
export const LIST_TYPE_ALIASES: Readonly<Record<string, ListType>> = {
  ssn: 'Social Security Numbers',
  ssn4: 'Last Four of Social Security Numbers',
  zip: 'ZIP Codes',
  phone: 'Telephone Numbers',
  email: 'Email Addresses',
  routing: 'Bank Routing Numbers',
  employer: 'Employer Names',
  affiliate: 'Affiliates',
};

/** An alias or the exact service name, both case-insensitive; undefined when it is neither. */
export function resolveListType(input: string): ListType | undefined {
  const wanted = input.trim().toLowerCase();
  if (Object.hasOwn(LIST_TYPE_ALIASES, wanted)) return LIST_TYPE_ALIASES[wanted];
  return LIST_TYPES.find((type) => type.toLowerCase() === wanted);
}

export const MAX_LIST_NAME_LENGTH = 255;
