import type { NextApiRequest, NextApiResponse } from 'next'

import { apiHandler } from '../../../server/api-handler'

/**
 * Next's body parser is off: the handler reads a JSON body itself, bounded in size and nesting, before anything
 * parses it (trpc-handler.ts, ADR 069). Next's parser would parse any nesting, then tRPC would serialize the result
 * again (a stack overflow, 500, past a few thousand levels).
 */
export const config = { api: { bodyParser: false } }

/** `/api/trpc/<procedure paths>`: the `[trpc]` segment is the comma-joined procedure path(s). */
export default function trpcRoute(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const segment = req.query.trpc
  return apiHandler(req, res, Array.isArray(segment) ? segment.join('/') : (segment ?? ''))
}
