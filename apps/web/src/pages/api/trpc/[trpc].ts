import { createNextApiHandler } from '@trpc/server/adapters/next'

import { appRouter } from '../../../server/root'
import { createContext } from '../../../server/trpc'

export default createNextApiHandler({
  router: appRouter,
  createContext,
  onError({ error, path }) {
    if (error.code === 'INTERNAL_SERVER_ERROR') console.error(`tRPC ${path ?? '<no path>'} failed:`, error)
  },
})
