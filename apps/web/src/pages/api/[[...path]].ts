import type { NextApiRequest, NextApiResponse } from 'next'

import { noApiHandler } from '../../server/api-handler'

/** Nothing is read from the body of a request that no API takes. */
export const config = { api: { bodyParser: false } }

/**
 * Every path under `/api` that no other API route takes (`/api`, `/api/nope`, `/api/trpc` without a procedure):
 * a JSON 404 in the API's error format, for any method, instead of Next's 404 page.
 */
export default function noApiRoute(req: NextApiRequest, res: NextApiResponse): void {
  noApiHandler(req, res)
}
