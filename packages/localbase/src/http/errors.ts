import { isConnectionFailure } from '../db/types.ts';

/** An error that becomes a JSON response `{ code, message }` with the given HTTP status. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, unknown>;
  /** Seconds for a Retry-After header (429 answers). */
  retryAfter?: number;
  constructor(status: number, code: string, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.extra = extra;
  }
}

export const badJson = (detail: string): ApiError =>
  new ApiError(400, 'bad_json', `Could not parse request body as JSON: ${detail}`);

export const validationFailed = (message: string): ApiError => new ApiError(400, 'validation_failed', message);

/**
 * GoTrue names the step that met a database out of reach in its 500 (unexpected_failure), e.g. "Database error
 * querying schema" for a password sign-in's lookup: `work`'s connection failure becomes that answer.
 */
export async function orDatabaseError<T>(message: string, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    if (isConnectionFailure(err)) throw new ApiError(500, 'unexpected_failure', message);
    throw err;
  }
}
