import { TRPCError } from '@trpc/server'

/**
 * The cause of a FORBIDDEN that the caller's second factor would lift: the session is at aal1 and its user has a
 * verified factor. The error formatter (trpc.ts) reports it as `data.secondFactorRequired: true`, which the client
 * reads to lead the user to /mfa instead of offering a retry that cannot succeed.
 */
export class SecondFactorRequired extends Error {
  override name = 'SecondFactorRequired'
}

/** FORBIDDEN because two-factor sign-in is not finished (recognisable by the client, see SecondFactorRequired). */
export function secondFactorRequiredError(message = 'Finish two-factor sign-in'): TRPCError {
  return new TRPCError({ code: 'FORBIDDEN', message, cause: new SecondFactorRequired(message) })
}
