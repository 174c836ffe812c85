import NextDocument, { Head, Html, Main, NextScript, type DocumentContext } from 'next/document'

import { headScripts } from '../lib/head-scripts'
import { SITE_DESCRIPTION } from '../lib/site'
import { config } from '../ui/config'
import { tamaguiCSS } from '../ui/server-css'

export default class Document extends NextDocument {
  static override async getInitialProps(ctx: DocumentContext) {
    return NextDocument.getInitialProps(ctx)
  }

  override render() {
    return (
      <Html lang="en" suppressHydrationWarning>
        <Head>
          {/* The stored theme applied before first paint (must stay the first thing in <head>), then the viewport
              hint for the server's next render of the notes list (lib/head-scripts.ts: the CSP allows these two). */}
          {headScripts().map((script) => (
            <script key={script} dangerouslySetInnerHTML={{ __html: script }} />
          ))}
          <meta name="description" content={SITE_DESCRIPTION} />
          <meta name="color-scheme" content="light dark" />
          <link rel="icon" href="/favicon.ico" sizes="32x32" />
          <link rel="stylesheet" href="/styles/base.css" />
          <style id="tamagui-css" dangerouslySetInnerHTML={{ __html: tamaguiCSS() }} />
        </Head>
        {/* Tamagui's default-font class (font_body): its font variables (--f-size-*, --f-lineHeight-*, --f-family) and
            line height reach every element, the plain ones (frame, auth pages, toasts: ADR 053) as the Tamagui ones. */}
        <body className={`font_${config.defaultFont}`}>
          <Main />
          <NextScript />
        </body>
      </Html>
    )
  }
}
