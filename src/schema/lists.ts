import * as z from 'zod';
import {
  EVEN_WITH_FIELD_ERRORS,
  LooseIntSchema,
  RequiredStringSchema,
  ServiceIdSchema,
  formatZodIssues,
  requiredOr,
  type FormattableIssue,
} from './common.js';
import { listRowMessage, validateListItem } from './list-items.js';
import { LIST_TYPES, MAX_LIST_NAME_LENGTH, type ListType } from './list-types.js';

export { LIST_TYPES, LIST_TYPE_ALIASES, MAX_LIST_NAME_LENGTH, resolveListType, type ListType } from './list-types.js';

export const ListTypeSchema = z.enum(LIST_TYPES, { error: requiredOr(`must be one of: ${LIST_TYPES.join(', ')}`) });

/** Body of Create List and Update List (update replaces every item). */
export const ListWriteSchema = z
  .strictObject({
    list: z.array(z.string()).min(1, { error: 'must hold at least one item' }),
    name: RequiredStringSchema.pipe(
      z.string().max(MAX_LIST_NAME_LENGTH, { error: `must be at most ${MAX_LIST_NAME_LENGTH} characters` }),
    ),
    type: ListTypeSchema,
  })
  .superRefine((body, ctx) => {
    const type = body.type as unknown;
    if (!Array.isArray(body.list) || !LIST_TYPES.includes(type as ListType)) return;
    body.list.forEach((item: unknown, index) => {
      if (typeof item !== 'string') return;
      const reason = validateListItem(type as ListType, item);
      if (reason !== null) ctx.addIssue({ code: 'custom', path: ['list', index], message: reason, input: item });
    });
  }, EVEN_WITH_FIELD_ERRORS);
export type ListWrite = z.infer<typeof ListWriteSchema>;

/** The List resource. Datetimes stay plain strings: Laravel may send fractions of a second. */
export const ListSchema = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  type: z.string(),
  deleted_at: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type List = z.infer<typeof ListSchema>;

export const ListResponseSchema = z.looseObject({ data: ListSchema });
export type ListResponse = z.infer<typeof ListResponseSchema>;

export const PageLinkSchema = z.looseObject({
  url: z.string().nullable(),
  label: z.string(),
  active: z.boolean(),
});
export type PageLink = z.infer<typeof PageLinkSchema>;

/** Laravel's length-aware page object around `item`. `from`/`to` are null on an empty page. */
export function pageSchema<T extends z.ZodType>(item: T) {
  return z.looseObject({
    current_page: z.number().int(),
    data: z.array(item),
    first_page_url: z.string(),
    from: z.number().int().nullable(),
    last_page: z.number().int(),
    last_page_url: z.string(),
    links: z.array(PageLinkSchema),
    next_page_url: z.string().nullable(),
    path: z.string(),
    per_page: LooseIntSchema,
    prev_page_url: z.string().nullable(),
    to: z.number().int().nullable(),
    total: z.number().int(),
  });
}

export const ListPageSchema = pageSchema(ListSchema);
export type ListPage = z.infer<typeof ListPageSchema>;

/** The `{listId}` path parameter. */
export const ListIdSchema = z.union(
  [
    ServiceIdSchema,
    z
      .string()
      .regex(/^[1-9]\d*$/)
      .transform(Number),
  ],
  {
    error: 'must be a positive whole number',
  },
);

/**
 * The 422 `errors` of Create/Update List: every bad item goes under `list` as
 * "Row N: reason" (1-based), other fields under their dotted path.
 */
export function listWriteErrorBag(error: { readonly issues: readonly FormattableIssue[] }): Record<string, string[]> {
  const bag: Record<string, string[]> = {};
  for (const issue of formatZodIssues(error, 'dotted')) {
    const row = /^list\.(\d+)$/.exec(issue.path);
    const key = row ? 'list' : issue.path;
    const message = row ? listRowMessage(Number(row[1]) + 1, issue.message) : issue.message;
    (bag[key] ??= []).push(message);
  }
  return bag;
}
