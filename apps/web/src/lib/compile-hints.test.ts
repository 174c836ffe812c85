// The compile-hint plugin in a real webpack production build (Next's own copy of webpack, content hashes and source
// maps as Next makes them): each chunk starts with the hint, its name's hash covers it, its source map accounts for
// the added line, and the chunk still runs. Not minified here (Next's minifier needs Next's build around it); that
// the hint outlives the minifier is checked on the real build's chunks (e2e/downloads.test.ts).
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { runInNewContext } from 'node:vm'
import { afterAll, describe, expect, it } from 'vitest'

import { COMPILE_HINT, compileHintsPlugin, wantsCompileHint } from './compile-hints'

interface Stats {
  hasErrors(): boolean
  toString(): string
}
type Webpack = ((options: unknown, callback: (error: Error | null, stats?: Stats) => void) => void) &
  Parameters<typeof compileHintsPlugin>[0]

const require = createRequire(import.meta.url)
const { webpack } = (require('next/dist/compiled/webpack/bundle5') as () => { webpack: Webpack })()

const dir = mkdtempSync(join(tmpdir(), 'compile-hints-'))
afterAll(() => rmSync(dir, { recursive: true, force: true }))
writeFileSync(join(dir, 'entry.js'), "import { greet } from './greet.js'\nglobalThis.result = greet('hint')\n")
writeFileSync(join(dir, 'greet.js'), 'export function greet(name) {\n  return `hello, ${name}`\n}\n')

/** Builds entry.js as Next builds the browser's chunks; the emitted files by name. */
function build(withHints: boolean): Promise<Map<string, string>> {
  const out = join(dir, withHints ? 'with' : 'without')
  return new Promise((resolve, reject) => {
    webpack(
      {
        mode: 'production',
        context: dir,
        entry: { main: './entry.js' },
        devtool: 'source-map',
        optimization: { minimize: false },
        output: { path: out, filename: 'static/chunks/[name]-[contenthash].js' },
        plugins: withHints ? [compileHintsPlugin(webpack)] : [],
      },
      (error, stats) => {
        if (error || !stats || stats.hasErrors()) return reject(error ?? new Error(stats?.toString()))
        const files = new Map<string, string>()
        for (const name of readdirSync(join(out, 'static/chunks'))) files.set(name, readFileSync(join(out, 'static/chunks', name), 'utf8'))
        resolve(files)
      },
    )
  })
}

const only = (files: Map<string, string>, suffix: string): [string, string] => {
  const found = [...files].filter(([name]) => name.endsWith(suffix))
  expect(found).toHaveLength(1)
  return found[0] as [string, string]
}

describe('compile hints', () => {
  it('picks every script of the client build but the legacy polyfills', () => {
    expect(wantsCompileHint('static/chunks/framework-32bd192232b371f7.js')).toBe(true)
    expect(wantsCompileHint('static/chunks/pages/notes/[id]-0a1b.js')).toBe(true)
    expect(wantsCompileHint('static/abc123/_buildManifest.js')).toBe(true)
    expect(wantsCompileHint('static/chunks/polyfills-42372ed130431b0a.js')).toBe(false)
    expect(wantsCompileHint('static/css/4a712f9652ff0032.css')).toBe(false)
    expect(wantsCompileHint('static/chunks/main-06e966d9219ea196.js.map')).toBe(false)
    expect(wantsCompileHint('server/pages/index.js')).toBe(false)
  })

  it('starts each chunk with the hint, in the content hash and the source map, and the chunk still runs', async () => {
    const [plain, hinted] = await Promise.all([build(false), build(true)])
    const [plainName, plainCode] = only(plain, '.js')
    const [hintedName, hintedCode] = only(hinted, '.js')
    expect(hintedCode.startsWith(COMPILE_HINT)).toBe(true)
    expect(plainCode.startsWith('//')).toBe(false)
    // the code is unchanged below the hint (bar the map's file name at the end)
    const withoutMapComment = (code: string) => code.replace(/\n\/\/# sourceMappingURL=.*\n?$/, '')
    expect(withoutMapComment(hintedCode)).toBe(COMPILE_HINT + withoutMapComment(plainCode))
    // the file's name follows its content, so a browser never keeps an old copy under the new name
    expect(hintedName).not.toBe(plainName)
    // the map: one more line, with nothing mapped on it, ahead of the same mappings
    const map = (files: Map<string, string>) => JSON.parse(only(files, '.js.map')[1]) as { mappings: string; sources: string[] }
    expect(map(hinted).mappings).toBe(`;${map(plain).mappings}`)
    expect(map(hinted).sources).toEqual(map(plain).sources)
    const sandbox: { result?: string } = {}
    runInNewContext(hintedCode, { globalThis: sandbox })
    expect(sandbox.result).toBe('hello, hint')
  }, 60_000)
})
