import * as z from 'zod';

/** Error body of the /api/v1 family: `message`, and on 422 `errors` keyed by dotted field path. */
export const ApiErrorBodySchema = z.looseObject({
  message: z.string(),
  errors: z.record(z.string(), z.array(z.string())).optional(),
});
export type ApiErrorBody = z.infer<typeof ApiErrorBodySchema>;

/** The messages the service documents per status code (429's and 503's are the sandbox's choice). */
export const API_ERROR_MESSAGES = {
  401: 'Unauthenticated.',
  403: 'This action is unauthorized.',
  404: 'Not Found',
  422: 'The given data was invalid.',
  429: 'Too Many Attempts.',
  500: 'Server Error',
  503: 'Service Unavailable',
} as const;
