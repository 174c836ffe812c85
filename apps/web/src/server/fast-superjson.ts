import superjson from 'superjson'
import type { SuperJSONResult } from 'superjson'

import { MAX_INPUT_DEPTH } from './request-guards'

/**
 * superjson's `serialize`, with a fast path for what the API answers almost always: plain objects, arrays, strings,
 * finite numbers, booleans, null and valid Dates, each object met once. For such a value it builds the result
 * superjson builds — the same `json`, and `meta.values` with the same flat paths (keys escaped as superjson escapes
 * them; in the same order, except that superjson's nesting can move integer-like paths first, which no reader
 * depends on) — in one pass, about 10× faster (superjson's general walker tracks every object's
 * identity and tries each of its transformers on every value: ≈ 0.3–0.4 ms for a page of 20 notes, the largest
 * part of a `notes.list` call's own work; docs/decisions/040-trpc-server-overhead.md). Anything else — undefined,
 * NaN, ±Infinity, -0, bigint, Map, Set, RegExp, Error, class instances, sparse arrays, an object or Date met
 * twice (superjson records referential equalities), a key superjson refuses (`__proto__`, `constructor`,
 * `prototype`) — goes to superjson itself, so the result is always superjson's. The browser deserializes with
 * superjson as before; `fast-superjson.test.ts` checks the results are identical on generated values.
 */
export function serialize(value: unknown): SuperJSONResult {
  const walk: Walk = { values: {}, dates: 0, seen: new Set(), segments: [] }
  const json = plain(value, walk)
  if (json === FALLBACK) return superjson.serialize(value)
  if (value instanceof Date) return { json: json as string, meta: { values: ['Date'], v: 1 } }
  if (walk.dates > 0) return { json: json as SuperJSONResult['json'], meta: { values: walk.values, v: 1 } }
  return { json: json as SuperJSONResult['json'] }
}

/**
 * The tRPC transformer: this serialize, superjson's deserialize (inputs are small; they are not worth a fast path).
 * An input that is not superjson's `{ json, meta }` object (`null`, a number, an array) is refused with a message
 * the API sends as it is (400): superjson's own error for `null` named its internals.
 */
export const fastSuperjson = {
  serialize,
  deserialize: <T = unknown>(payload: SuperJSONResult): T => {
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload)) {
      throw new Error('The input must be a JSON object as the tRPC client sends it: {"json": …}.')
    }
    checkAnnotations(payload)
    return superjson.deserialize<T>(payload)
  },
}

const FALLBACK: unique symbol = Symbol('fallback')
const REFUSED_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const escapeKey = (key: string) => (key.includes('\\') || key.includes('.') ? key.replace(/\\/g, '\\\\').replace(/\./g, '\\.') : key)

interface Walk {
  /** superjson's `meta.values`: the path of every Date */
  values: Record<string, ['Date']>
  dates: number
  /** every object and Date met so far */
  seen: Set<object>
  /** the path to the current value, each key escaped; joined only for a Date */
  segments: string[]
}

function plain(value: unknown, walk: Walk): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0) ? value : FALLBACK
    case 'object': {
      if (value === null) return null
      if (walk.seen.has(value)) return FALLBACK
      walk.seen.add(value)
      if (value instanceof Date) {
        if (Number.isNaN(value.getTime()) || Object.getPrototypeOf(value) !== Date.prototype) return FALLBACK
        walk.values[walk.segments.join('.')] = ['Date']
        walk.dates++
        return value.toISOString()
      }
      const { segments } = walk
      if (Array.isArray(value)) {
        if (Object.getPrototypeOf(value) !== Array.prototype) return FALLBACK
        const out: unknown[] = new Array(value.length)
        for (let i = 0; i < value.length; i++) {
          if (!(i in value)) return FALLBACK
          segments.push(String(i))
          const item = plain(value[i], walk)
          segments.pop()
          if (item === FALLBACK) return FALLBACK
          out[i] = item
        }
        return out
      }
      const proto = Object.getPrototypeOf(value)
      if (proto !== Object.prototype && proto !== null) return FALLBACK
      const out: Record<string, unknown> = {}
      for (const key of Object.keys(value)) {
        if (REFUSED_KEYS.has(key)) return FALLBACK
        segments.push(escapeKey(key))
        const item = plain((value as Record<string, unknown>)[key], walk)
        segments.pop()
        if (item === FALLBACK) return FALLBACK
        out[key] = item
      }
      // Symbol-keyed properties are not enumerated by superjson either; nothing else to compare.
      return out
    }
    default:
      return FALLBACK
  }
}

/**
 * The most strings (paths and type names) the `meta` of one input may hold. The app's inputs carry a handful (a Date
 * or two); each one is a walk into the value, and each reference a copy: 60,000 references in half a megabyte held
 * the event loop ≈ 1 s, before any budget or validation could refuse the call (ADR 178).
 */
export const MAX_ANNOTATIONS = 1000
/** The most digits a BigInt of an input may have (parsing one costs time that grows with the square of its length). */
export const MAX_BIGINT_DIGITS = 4300

/**
 * Refuses an input whose superjson annotations would cost more than any input of the app needs: more than
 * MAX_ANNOTATIONS strings in its `meta`, a path of more than MAX_INPUT_DEPTH keys (it cannot name anything in an
 * input that passed the nesting bound), a BigInt of more than MAX_BIGINT_DIGITS digits. One pass over `meta` (and
 * over `json` only when a BigInt is annotated), stopping at the first excess; the error is the call's BAD_REQUEST.
 */
function checkAnnotations(payload: object): void {
  const { meta, json } = payload as { meta?: unknown; json?: unknown }
  if (meta === undefined || meta === null || typeof meta !== 'object') return
  let strings = 0
  let bigint = false
  const count = (text: string) => {
    if (++strings > MAX_ANNOTATIONS) throw new Error(`The input has more superjson annotations than the API takes (at most ${MAX_ANNOTATIONS}).`)
    let dots = 0
    for (let i = text.indexOf('.'); i !== -1; i = text.indexOf('.', i + 1)) {
      if (++dots >= MAX_INPUT_DEPTH) throw new Error(`The input's superjson annotations name a path deeper than any input (more than ${MAX_INPUT_DEPTH} keys).`)
    }
    if (text === 'bigint') bigint = true
  }
  const walk = (value: unknown): void => {
    if (typeof value === 'string') count(value)
    else if (Array.isArray(value)) for (const item of value) walk(item)
    else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        count(key)
        walk(item)
      }
    }
  }
  walk(meta)
  if (bigint && longestString(json) > MAX_BIGINT_DIGITS + 1) {
    throw new Error(`The input's superjson annotations mark a number longer than a BigInt the API takes (at most ${MAX_BIGINT_DIGITS} digits).`)
  }
}

/** The length of the longest string in a JSON value. */
function longestString(value: unknown): number {
  if (typeof value === 'string') return value.length
  if (value === null || typeof value !== 'object') return 0
  let longest = 0
  for (const item of Array.isArray(value) ? value : Object.values(value)) longest = Math.max(longest, longestString(item))
  return longest
}
