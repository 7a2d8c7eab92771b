import type { FastifyReply } from 'fastify';

/** The service's error messages (Laravel's wording, as documented). */
export const Messages = {
  unauthenticated: 'Unauthenticated.',
  forbidden: 'This action is unauthorized.',
  notFound: 'Not Found',
  invalid: 'The given data was invalid.',
  tooManyAttempts: 'Too Many Attempts.',
  serverError: 'Server Error',
  unavailable: 'Service Unavailable',
} as const;

export type FieldErrors = Record<string, string[]>;

export function sendValidationError(reply: FastifyReply, errors: FieldErrors): FastifyReply {
  return reply.code(422).send({ message: Messages.invalid, errors });
}

export function sendNotFound(reply: FastifyReply): FastifyReply {
  return reply.code(404).send({ message: Messages.notFound });
}

export function addFieldError(errors: FieldErrors, field: string, message: string): void {
  (errors[field] ??= []).push(message);
}
