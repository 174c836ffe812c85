import { StorageClient, isStorageError, type StorageError } from '@supabase/storage-js'
import { TRPCError } from '@trpc/server'

import { backendConfig } from '../lib/env'
import type { AppDataClient } from '../lib/supabase/client-type'

/** What the routers need of a storage client: one bucket at a time. */
export type UserStorage = Pick<StorageClient, 'from'>

/**
 * Storage (`/storage/v1`) as the verified caller — the user's access token and the anon key, never the service
 * key: the policies on `storage.objects` decide every call (ADR 037). A context made with a whole Supabase client
 * (server-side callers, tests) uses that client's storage, which acts as the same user; a request's context has
 * only the light data client (ADR 040), so a storage client is made for its token here, on first use.
 */
export function storageAs(db: AppDataClient, accessToken: string): UserStorage {
  if ('storage' in db) return (db as { storage: UserStorage }).storage
  return new StorageClient(`${backendConfig.supabaseUrl}/storage/v1`, {
    apikey: backendConfig.supabaseAnonKey,
    Authorization: `Bearer ${accessToken}`,
  })
}

const UNREACHABLE = "Can't reach the server. Check your connection and try again."
const FILE_GONE = 'This file does not exist any more.'

/**
 * A storage error as a tRPC error a person can act on. storage-js reports the server's meaning in `statusCode`
 * (the HTTP status is 400 for every 4xx, as Supabase's server sends it); a network failure has no status.
 * `refused` says what an RLS refusal (403) means where it happens: the note is not the caller's, or gone.
 */
export function storageError(error: unknown, refused: string): TRPCError {
  if (!isStorageError(error)) return new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'The files could not be loaded or saved. Try again.' })
  const { statusCode, status } = error as StorageError
  if (status === undefined || status === 0) return new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: UNREACHABLE })
  // A key the server refuses to read (NUL, characters outside its set, too long): no file can have that name, so
  // there is none to find. Was a 500 "could not be loaded or saved" for a name an API client made up.
  if (statusCode === '400' && (error as StorageError & { code?: string }).code === 'InvalidKey')
    return new TRPCError({ code: 'NOT_FOUND', message: FILE_GONE })
  switch (statusCode) {
    case '403':
    case '401':
      return new TRPCError({ code: 'NOT_FOUND', message: refused })
    case '404':
      return new TRPCError({ code: 'NOT_FOUND', message: FILE_GONE })
    case '409':
      return new TRPCError({ code: 'CONFLICT', message: 'A file with this name is attached already.' })
    case '413':
      return new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: 'The file is larger than the server allows.' })
    case '415':
      return new TRPCError({ code: 'BAD_REQUEST', message: 'The server does not take files of this type here.' })
    default:
      return new TRPCError({ code: 'INTERNAL_SERVER_ERROR', message: 'The files could not be loaded or saved. Try again.' })
  }
}
