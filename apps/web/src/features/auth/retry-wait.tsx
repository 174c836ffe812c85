// A wait the auth server asked for, counting down on the auth forms. Its own module, so that the pages that use only
// the form parts (the note pages' forms) do not load the auth error texts it needs.
import { useEffect, useState } from 'react'

import { secondsText, type ReadableAuthError } from './auth-errors'
import { FormMessage } from './form'

/**
 * A wait the auth server asked for (ReadableAuthError.retry), for the address `key` it was asked for: `text` says the
 * seconds left, counting down, and is null once they are over (or for another address), when the form may try
 * again. `start` begins one and says whether the error had one.
 */
export function useRetryWait(key: string): { text: string | null; start: (readable: Pick<ReadableAuthError, 'retry'>) => boolean } {
  const [wait, setWait] = useState<{ key: string; until: number; say: (left: string) => string } | null>(null)
  const [ticks, tick] = useState(0)
  const ms = wait ? wait.until - Date.now() : 0
  useEffect(() => {
    if (!wait) return
    const left = wait.until - Date.now()
    if (left <= 0) {
      setWait(null)
      return
    }
    // again at the next whole second of the wait
    const timer = setTimeout(() => tick((n) => n + 1), left % 1000 || 1000)
    return () => clearTimeout(timer)
  }, [wait, ticks])
  return {
    text: wait && ms > 0 && wait.key === key ? wait.say(secondsText(Math.ceil(ms / 1000))) : null,
    start(readable) {
      const retry = readable.retry
      if (retry) setWait({ key, until: Date.now() + retry.seconds * 1000, say: retry.say })
      return Boolean(retry)
    },
  }
}

/** The wait's message: announced once when it appears (role=alert), not again at each second it counts down. */
export function WaitMessage({ text }: { text: string }) {
  return (
    <FormMessage kind="error">
      <span aria-live="off">{text}</span>
    </FormMessage>
  )
}
