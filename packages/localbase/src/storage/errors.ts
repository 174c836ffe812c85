/**
 * The storage server's errors: a JSON body `{ statusCode, code, error, message }` where `statusCode` is the meaning
 * as a string ("404", "409", "413" …). As Supabase's storage server, the HTTP status is 400 for every 4xx meaning
 * and 500 for 5xx, except routes that keep theirs (403 on service_role-only routes); storage-js reads the body.
 */
export class StorageError extends Error {
  /** The semantic status carried in the body's `statusCode`. */
  readonly statusCode: number;
  readonly code: string;
  readonly error: string;
  /** The HTTP status on the wire (default: 400 for 4xx, 500 for 5xx). */
  readonly httpStatus: number;
  constructor(statusCode: number, code: string, error: string, message: string, httpStatus?: number) {
    super(message);
    this.name = 'StorageError';
    this.statusCode = statusCode;
    this.code = code;
    this.error = error;
    this.httpStatus = httpStatus ?? (statusCode >= 500 ? 500 : 400);
  }
  body(): Record<string, string> {
    return { statusCode: String(this.statusCode), code: this.code, error: this.error, message: this.message };
  }
}

export const bucketNotFound = (): StorageError => new StorageError(404, 'NoSuchBucket', 'Bucket not found', 'Bucket not found');
export const objectNotFound = (): StorageError => new StorageError(404, 'NoSuchKey', 'not_found', 'Object not found');
export const keyExists = (): StorageError => new StorageError(409, 'KeyAlreadyExists', 'Duplicate', 'The resource already exists');
export const bucketExists = (): StorageError =>
  new StorageError(409, 'BucketAlreadyExists', 'Duplicate', 'The resource already exists');
export const bucketNotEmpty = (): StorageError =>
  new StorageError(409, 'ResourceNotEmpty', 'ResourceNotEmpty', 'The bucket you tried to delete is not empty');
export const tooLarge = (): StorageError =>
  new StorageError(413, 'EntityTooLarge', 'Payload too large', 'The object exceeded the maximum allowed size');
export const badMime = (type: string): StorageError =>
  new StorageError(415, 'InvalidMimeType', 'invalid_mime_type', `mime type ${type} is not supported`);
export const rlsDenied = (): StorageError =>
  new StorageError(403, 'AccessDenied', 'Unauthorized', 'new row violates row-level security policy');
export const accessDenied = (message: string, httpStatus?: number): StorageError =>
  new StorageError(403, 'AccessDenied', 'Unauthorized', message, httpStatus);
export const invalidKey = (key: string): StorageError => new StorageError(400, 'InvalidKey', 'InvalidKey', `Invalid key: ${key}`);
export const invalidRequest = (message: string, error = 'InvalidRequest'): StorageError =>
  new StorageError(400, 'InvalidRequest', error, message);
export const invalidJwt = (message: string): StorageError => new StorageError(400, 'InvalidJWT', 'InvalidJWT', message);
/**
 * No pooled connection within the connect timeout, or a statement past --statement-timeout (SQLSTATE 57014): the
 * storage server's DatabaseTimeout, which keeps its own status 544 on the wire rather than the usual 500.
 */
export const databaseTimeout = (): StorageError =>
  new StorageError(544, 'DatabaseTimeout', 'DatabaseTimeout', 'The connection to the database timed out', 544);
export const invalidSignature = (message = 'Invalid signature'): StorageError =>
  new StorageError(400, 'InvalidSignature', 'InvalidSignature', message);
