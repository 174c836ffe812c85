import { useState } from 'react'

import { useMutationPending } from '../../lib/pending-mutations'
import { useRouteChange } from '../../lib/use-route-change'

/** Route changes in flight (client-side navigation). */
function useRouteChangePending(): boolean {
  const [pending, setPending] = useState(false)
  useRouteChange({
    onStart: (_url, { shallow }) => {
      if (!shallow) setPending(true)
    },
    onEnd: () => setPending(false),
  })
  return pending
}

/** z-index of the bar: token $4 (400), below the toast viewport. */
export const PROGRESS_BAR_Z_INDEX = 400

/** A thin indeterminate bar at the very top while a route change or a mutation is pending. */
export function ProgressBar() {
  const routePending = useRouteChangePending()
  const mutating = useMutationPending()
  if (!routePending && !mutating) return null
  return (
    <div role="progressbar" aria-label="Loading" className="progress-bar" style={{ zIndex: PROGRESS_BAR_Z_INDEX }}>
      <div className="progress-bar__indicator" />
    </div>
  )
}
