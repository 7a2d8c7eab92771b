import * as z from 'zod';
import { IsoDateSchema, IsoDateTimeSchema, LooseIntSchema, checkedString } from './common.js';

/** A data dictionary attribute id: `m` followed by a number. */
export const MAP_ID_PATTERN = /^m\d+$/;
export const MapIdSchema = checkedString((value) =>
  MAP_ID_PATTERN.test(value) ? null : 'must be a map id: m followed by a number, e.g. m1',
);

export const DEFAULT_LEAD_IDS_PER_PAGE = 100;
/** Our limit (the contract names none); the sandbox answers 422 beyond it. */
export const MAX_LEAD_IDS_PER_PAGE = 1000;

/** A whole number from a query string ("25") or from code (25). */
const queryInt = (min: number, max: number) =>
  z.union([z.number(), z.string().regex(/^\d+$/).transform(Number)], { error: 'must be a whole number' }).pipe(
    z.number().refine((value) => Number.isSafeInteger(value) && value >= min && value <= max, {
      error: `must be a whole number from ${min} to ${max}`,
    }),
  );

/** Query of `GET /api/v1/lead-data/lead-ids`. */
export const LeadIdsQuerySchema = z.strictObject({
  date: IsoDateSchema.optional(),
  datetime: IsoDateTimeSchema.optional(),
  per_page: queryInt(1, MAX_LEAD_IDS_PER_PAGE).optional(),
  cursor: z.string().optional(),
});
export type LeadIdsQuery = z.infer<typeof LeadIdsQuerySchema>;

export const LeadIdsPageSchema = z.looseObject({
  data: z.array(z.number().int()),
  links: z.looseObject({
    first: z.string().nullable(),
    last: z.string().nullable(),
    prev: z.string().nullable(),
    next: z.string().nullable(),
  }),
  meta: z.looseObject({
    path: z.string(),
    per_page: LooseIntSchema,
    next_cursor: z.string().nullable(),
    prev_cursor: z.string().nullable(),
  }),
});
export type LeadIdsPage = z.infer<typeof LeadIdsPageSchema>;

/** Query of `GET /api/v1/lead-data/leads/{leadId}`: one map id or many (`map_ids[]=m1&map_ids[]=m2`). */
export const LeadQuerySchema = z.strictObject({
  map_ids: z.union([MapIdSchema.transform((id) => [id]), z.array(MapIdSchema)]).optional(),
});
export type LeadQuery = z.infer<typeof LeadQuerySchema>;

export const DATA_ATTRIBUTE_TYPES = ['String', 'Number', 'Boolean'] as const;

/** A data dictionary entry. `type` stays a plain string so a new type from the service still parses. */
export const DataAttributeSchema = z.looseObject({
  id: z.string(),
  category: z.string(),
  subcategory: z.string(),
  name: z.string(),
  column: z.string(),
  type: z.string(),
});
export type DataAttribute = z.infer<typeof DataAttributeSchema>;

export const DictionaryResponseSchema = z.looseObject({ data: z.array(DataAttributeSchema) });
export type DictionaryResponse = z.infer<typeof DictionaryResponseSchema>;

/** One lead's file builder values keyed by map id, in their natural JSON types. */
export const LeadResponseSchema = z.looseObject({ data: z.record(z.string(), z.unknown()) });
export type LeadResponse = z.infer<typeof LeadResponseSchema>;
