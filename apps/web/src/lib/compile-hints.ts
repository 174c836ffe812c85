/**
 * V8's explicit compile hint for the browser's chunks (docs/decisions/055-v8-compile-hints.md): a script whose first
 * line is this magic comment has all its functions compiled eagerly, while the browser streams it in on a background
 * thread, instead of lazily on the main thread the first time each one is called (Chrome/Edge 136+; other engines
 * ignore the comment). webpack wraps every module in a function, so without it the main thread compiles the whole
 * of React and Next's runtime while it hydrates the page: at 4× CPU throttling that was most of a 500 ms task on
 * every page, the floor page included (bench/web-lab.ts).
 */
export const COMPILE_HINT = '//# allFunctionsCalledOnLoad\n'

/**
 * The client build's files that get the hint: every JavaScript chunk under `static/`. Not the legacy polyfills
 * (`nomodule`: only browsers without modules run them, and none of those is V8 with compile hints).
 */
export function wantsCompileHint(file: string): boolean {
  return file.startsWith('static/') && file.endsWith('.js') && !/(^|\/)polyfills-[^/]*\.js$/.test(file)
}

/** The parts of webpack the plugin uses (Next passes its own copy to `webpack()` in next.config). */
interface Webpack {
  Compilation: { PROCESS_ASSETS_STAGE_OPTIMIZE_SIZE: number }
  sources: { ConcatSource: new (...parts: unknown[]) => unknown }
}
interface Compilation {
  hooks: { processAssets: { tap(options: { name: string; stage: number }, fn: (assets: Record<string, unknown>) => void): void } }
  updateAsset(file: string, update: (source: unknown) => unknown): void
}
interface Compiler {
  hooks: { thisCompilation: { tap(name: string, fn: (compilation: Compilation) => void): void } }
}

const NAME = 'CompileHintsPlugin'

/**
 * A webpack plugin for Next's client production build: puts COMPILE_HINT in front of each chunk `wantsCompileHint`
 * picks, right after minification (which drops comments) and before the content hashes and source maps are made, so
 * file names and maps account for the added line.
 */
export function compileHintsPlugin(webpack: Webpack) {
  return {
    apply(compiler: Compiler): void {
      compiler.hooks.thisCompilation.tap(NAME, (compilation) => {
        compilation.hooks.processAssets.tap({ name: NAME, stage: webpack.Compilation.PROCESS_ASSETS_STAGE_OPTIMIZE_SIZE + 1 }, (assets) => {
          for (const file of Object.keys(assets)) {
            if (wantsCompileHint(file)) compilation.updateAsset(file, (source) => new webpack.sources.ConcatSource(COMPILE_HINT, source))
          }
        })
      })
    },
  }
}
