import { z } from 'zod'

import { backendConfig } from '../../lib/env'
import packageJson from '../../../package.json'
import { createTRPCRouter, publicProcedure } from '../trpc'

/** Health and configuration of the app itself; proves Dates survive the wire (superjson). */
export const systemRouter = createTRPCRouter({
  health: publicProcedure.query(() => ({
    ok: true as const,
    time: new Date(),
    version: packageJson.version,
  })),

  config: publicProcedure.query(() => ({
    supabaseUrl: backendConfig.supabaseUrl,
    backend: backendConfig.backend,
  })),

  clockSkew: publicProcedure.input(z.object({ clientTime: z.date() })).mutation(({ input }) => {
    const serverTime = new Date()
    return { serverTime, skewMs: serverTime.getTime() - input.clientTime.getTime() }
  }),
})
