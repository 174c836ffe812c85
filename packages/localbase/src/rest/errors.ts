/**
 * Errors of the /rest/v1 data API, shaped like PostgREST's: the response body is
 * `{ code, message, details, hint }` and the HTTP status travels with the error.
 */

/** `details` is usually a string; PGRST201 (ambiguous embedding) sends an array of candidates. */
export type RestErrorDetails = string | null | ReadonlyArray<Record<string, string>>;

export interface RestErrorBody {
  code: string;
  message: string;
  details: RestErrorDetails;
  hint: string | null;
}

export class RestError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: RestErrorDetails;
  readonly hint: string | null;

  constructor(status: number, code: string, message: string, details: RestErrorDetails = null, hint: string | null = null) {
    super(message);
    this.name = 'RestError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.hint = hint;
  }

  /** The JSON body PostgREST would send (key order as PostgREST: code, details, hint, message). */
  toJSON(): RestErrorBody {
    return { code: this.code, details: this.details, hint: this.hint, message: this.message };
  }
}

export const isRestError = (e: unknown): e is RestError => e instanceof RestError;
