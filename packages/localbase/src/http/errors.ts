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
