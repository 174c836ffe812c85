import NextDocument, { Head, Html, Main, NextScript, type DocumentContext } from 'next/document'

import { themeInitScript } from '../features/theme'
import { SITE_DESCRIPTION } from '../lib/site'
import { config } from '../ui/config'

export default class Document extends NextDocument {
  static override async getInitialProps(ctx: DocumentContext) {
    return NextDocument.getInitialProps(ctx)
  }

  override render() {
    return (
      <Html lang="en" suppressHydrationWarning>
        <Head>
          {/* Applies the stored theme before first paint; must stay the first thing in <head>. */}
          <script dangerouslySetInnerHTML={{ __html: themeInitScript() }} />
          <meta name="description" content={SITE_DESCRIPTION} />
          <meta name="color-scheme" content="light dark" />
          <link rel="icon" href="/favicon.ico" sizes="32x32" />
          <link rel="stylesheet" href="/styles/base.css" />
          <style id="tamagui-css" dangerouslySetInnerHTML={{ __html: config.getCSS() }} />
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
