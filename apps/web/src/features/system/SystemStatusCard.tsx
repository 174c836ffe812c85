import { useMutation, useQuery } from '@tanstack/react-query'
import { useLayoutEffect, useRef, type ReactNode } from 'react'

import { useTRPC } from '../../lib/trpc'
import { readableApiError } from '../auth'
import controls from '../../ui/controls.module.css'
import { ActivityIcon, RefreshIcon, SpinnerIcon } from '../../ui/icons'
import panel from '../../ui/panel.module.css'
import { toast } from '../toast'
import styles from './system-status.module.css'

function Skeleton({ width }: { width: number }) {
  return <span className={`skeleton ${styles.skeleton}`} style={{ width }} />
}

function Row({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className={styles.row}>
      <span className={styles.rowLabel}>{label}</span>
      <div className={styles.rowValue}>{children}</div>
    </div>
  )
}

/**
 * The card's error with its "Retry". While the queries run again the button says so and waits (aria-disabled, so a
 * keyboard user keeps focus on it). Once they load it goes: focus, if it had it, moves to the card's heading rather
 * than dropping to <body>.
 */
function StatusError({ message, retrying, onRetry }: { message: string; retrying: boolean; onRetry: () => void }) {
  const ref = useRef<HTMLDivElement>(null)
  useLayoutEffect(() => {
    const element = ref.current
    // Runs before the element leaves the document: the focused button is still in it.
    return () => {
      if (element?.contains(document.activeElement)) document.getElementById('system-status-heading')?.focus()
    }
  }, [])
  return (
    <div ref={ref} role="alert" className={`${styles.error} t_red`}>
      <span className={styles.errorTitle}>Could not reach the API</span>
      <span className={styles.errorText}>{message}</span>
      <div>
        <button
          type="button"
          className={`${controls.button} ${controls.small} ${controls.iconGap} ${controls.regular} ${styles.retry}`}
          aria-disabled={retrying || undefined}
          onClick={() => retrying || onRetry()}
        >
          {retrying ? <SpinnerIcon size={16} /> : <RefreshIcon size={16} />}
          {retrying ? 'Retrying…' : 'Retry'}
        </button>
      </div>
    </div>
  )
}

/**
 * Live status of the app's own API: `system.health` and `system.config` load in the same render, so the
 * client batches them into one GET. "Check connection" runs the `system.clockSkew` mutation (POST).
 */
export function SystemStatusCard() {
  const trpc = useTRPC()
  const health = useQuery(trpc.system.health.queryOptions())
  const config = useQuery(trpc.system.config.queryOptions())
  const clockSkew = useMutation(
    trpc.system.clockSkew.mutationOptions({
      onSuccess: ({ skewMs }) => {
        const direction = skewMs === 0 ? 'in sync' : skewMs > 0 ? 'ahead of this device' : 'behind this device'
        toast.success('Connected', `The server answered; its clock is ${Math.abs(skewMs)} ms ${direction}.`)
      },
      // No answer at all (offline) is said in words, not as the browser's "Failed to fetch".
      onError: (error) => toast.error('Connection check failed', readableApiError(error)),
    }),
  )

  const loading = health.isPending || config.isPending
  const error = health.error ?? config.error

  return (
    <section aria-labelledby="system-status-heading" className={`${panel.raised} ${styles.card}`}>
      <div className={styles.header}>
        <div className={styles.heading}>
          <span className={`${styles.badge} ${error ? 't_red' : 't_green'}`}>
            <ActivityIcon size={17} />
          </span>
          <h2 id="system-status-heading" className={styles.title} tabIndex={-1}>
            System status
          </h2>
        </div>
        {!loading && !error ? (
          <span className={`${styles.operational} t_green`}>
            <span className={styles.dot} />
            Operational
          </span>
        ) : null}
      </div>

      {error ? (
        <StatusError
          message={readableApiError(error)}
          retrying={health.isFetching || config.isFetching}
          onRetry={() => {
            void health.refetch()
            void config.refetch()
          }}
        />
      ) : (
        <div aria-busy={loading}>
          <Row label="Server time">
            {health.data ? (
              <span className={styles.value} data-testid="server-time">
                {health.data.time.toISOString()}
              </span>
            ) : (
              <Skeleton width={210} />
            )}
          </Row>
          <Row label="Version">
            {health.data ? (
              <span className={styles.value} data-testid="app-version">
                {health.data.version}
              </span>
            ) : (
              <Skeleton width={60} />
            )}
          </Row>
          <Row label="Backend">
            {config.data ? (
              <div className={styles.backend}>
                <span className={styles.value} data-testid="backend-url">
                  {config.data.supabaseUrl}
                </span>
                <span className={`${styles.tag} ${config.data.backend === 'local' ? 't_blue' : 't_yellow'}`}>{config.data.backend}</span>
              </div>
            ) : (
              <Skeleton width={180} />
            )}
          </Row>
        </div>
      )}

      <div className={styles.footer}>
        <button
          type="button"
          className={`${controls.button} ${controls.small} ${controls.iconGap} ${controls.regular} t_accent`}
          // Pending: aria-disabled, not `disabled`, which would drop a keyboard user's focus to <body>.
          aria-disabled={clockSkew.isPending || undefined}
          onClick={() => clockSkew.isPending || clockSkew.mutate({ clientTime: new Date() })}
        >
          {clockSkew.isPending ? <SpinnerIcon size={16} /> : null}
          Check connection
        </button>
      </div>
    </section>
  )
}
