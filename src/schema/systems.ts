import * as z from 'zod';

export const ManagementSystemSchema = z.looseObject({
  id: z.number().int(),
  name: z.string(),
});
export type ManagementSystem = z.infer<typeof ManagementSystemSchema>;

export const ManagementSystemsResponseSchema = z.looseObject({
  data: z.array(ManagementSystemSchema),
});
export type ManagementSystemsResponse = z.infer<typeof ManagementSystemsResponseSchema>;
