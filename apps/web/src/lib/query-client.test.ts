import { environmentManager, QueryObserver } from '@tanstack/react-query'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'

import { createQueryClient } from './query-client'

// The app's client runs in the browser; TanStack applies different defaults on the server
// (no retries, no garbage collection), so run these as the browser would.
beforeEach(() => {
  environmentManager.setIsServer(() => false)
  vi.useFakeTimers()
})
afterEach(() => {
  vi.useRealTimers()
  environmentManager.setIsServer(() => typeof window === 'undefined')
})

describe('query client defaults', () => {
  it('creates a new, independent client each time', () => {
    const a = createQueryClient()
    const b = createQueryClient()
    expect(a).not.toBe(b)
    a.setQueryData(['x'], 1)
    expect(b.getQueryData(['x'])).toBeUndefined()
  })

  it('discards an unused query 5 minutes after its last observer leaves', async () => {
    const client = createQueryClient()
    const observer = new QueryObserver(client, { queryKey: ['gc'], queryFn: async () => 'value' })
    const unsubscribe = observer.subscribe(() => {})
    await vi.advanceTimersByTimeAsync(0)
    expect(client.getQueryData(['gc'])).toBe('value')
    unsubscribe()
    await vi.advanceTimersByTimeAsync(5 * 60 * 1000 - 1)
    expect(client.getQueryCache().find({ queryKey: ['gc'] })).toBeDefined()
    await vi.advanceTimersByTimeAsync(1)
    expect(client.getQueryCache().find({ queryKey: ['gc'] })).toBeUndefined()
  })

  it('retries a failing query 3 times with exponential delays of 1, 2 and 4 seconds', async () => {
    const client = createQueryClient()
    const start = Date.now()
    const attempts: number[] = []
    const observer = new QueryObserver(client, {
      queryKey: ['failing'],
      queryFn: async () => {
        attempts.push(Date.now() - start)
        throw new Error('down')
      },
    })
    const unsubscribe = observer.subscribe(() => {})
    await vi.advanceTimersByTimeAsync(60_000)
    expect(attempts).toEqual([0, 1000, 3000, 7000])
    expect(observer.getCurrentResult().status).toBe('error')
    expect(observer.getCurrentResult().failureCount).toBe(4)
    unsubscribe()
  })

  it('caps the default retry delay at 30 seconds', async () => {
    const client = createQueryClient()
    const start = Date.now()
    const attempts: number[] = []
    const observer = new QueryObserver(client, {
      queryKey: ['failing-long'],
      retry: 7,
      queryFn: async () => {
        attempts.push(Date.now() - start)
        throw new Error('down')
      },
    })
    const unsubscribe = observer.subscribe(() => {})
    await vi.advanceTimersByTimeAsync(200_000)
    const delays = attempts.slice(1).map((t, i) => t - (attempts[i] ?? 0))
    expect(delays).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000])
    unsubscribe()
  })

  it('does not retry an answer that cannot change (4xx other than 408 and 429), and shows it at once', async () => {
    for (const [code, httpStatus] of [
      ['UNAUTHORIZED', 401],
      ['FORBIDDEN', 403],
      ['NOT_FOUND', 404],
      ['BAD_REQUEST', 400],
    ] as const) {
      const client = createQueryClient()
      let calls = 0
      const observer = new QueryObserver(client, {
        queryKey: ['refused', code],
        queryFn: async () => {
          calls += 1
          throw Object.assign(new Error(code), { data: { code, httpStatus } })
        },
      })
      const unsubscribe = observer.subscribe(() => {})
      await vi.advanceTimersByTimeAsync(0)
      expect(observer.getCurrentResult().status, code).toBe('error')
      await vi.advanceTimersByTimeAsync(60_000)
      expect(calls, code).toBe(1)
      unsubscribe()
    }
  })

  it('keeps the default 3 retries for server errors, network failures, 408 and 429', async () => {
    for (const data of [{ httpStatus: 500 }, { httpStatus: 503 }, { httpStatus: 408 }, { httpStatus: 429 }, undefined]) {
      const client = createQueryClient()
      let calls = 0
      const observer = new QueryObserver(client, {
        queryKey: ['retried', data?.httpStatus ?? 'network'],
        queryFn: async () => {
          calls += 1
          throw Object.assign(new Error('down'), data ? { data } : {})
        },
      })
      const unsubscribe = observer.subscribe(() => {})
      await vi.advanceTimersByTimeAsync(60_000)
      expect(calls, String(data?.httpStatus ?? 'network')).toBe(4)
      unsubscribe()
    }
  })

  it('does not retry mutations', async () => {
    const client = createQueryClient()
    let calls = 0
    const mutation = client.getMutationCache().build(client, {
      mutationFn: async () => {
        calls += 1
        throw new Error('nope')
      },
    })
    await expect(mutation.execute(undefined)).rejects.toThrow('nope')
    await vi.advanceTimersByTimeAsync(60_000)
    expect(calls).toBe(1)
  })
})
