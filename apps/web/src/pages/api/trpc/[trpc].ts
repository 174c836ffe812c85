import type { NextApiRequest, NextApiResponse } from 'next'

import { apiHandler } from '../../../server/api-handler'

/** `/api/trpc/<procedure paths>`: the `[trpc]` segment is the comma-joined procedure path(s). */
export default function trpcRoute(req: NextApiRequest, res: NextApiResponse): Promise<void> {
  const segment = req.query.trpc
  return apiHandler(req, res, Array.isArray(segment) ? segment.join('/') : (segment ?? ''))
}
