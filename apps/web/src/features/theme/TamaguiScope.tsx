// Tamagui for the parts of the app that still render Tamagui components (the settings and security pages). Not in
// _app: the frame, the auth pages, the notes, the create modal and the toasts are plain HTML styled with the CSS
// variables Tamagui generates, so @tamagui/web lands only in the chunks of the pages and islands that bring this (ADR 053).
import { useEffect, useLayoutEffect, useRef, type ComponentType, type ReactNode } from 'react'
import { TamaguiProvider } from 'tamagui'

import { config } from '../../ui/config'
import { applyToDocument, useThemeSetting } from './ThemeProvider'

const useIsomorphicLayoutEffect = typeof window === 'undefined' ? useEffect : useLayoutEffect

/**
 * Tamagui's provider for the tree below, on the theme the ThemeProvider resolved (so a Tamagui component and the
 * plain elements around it always show the same scheme). Inside a page or an island: several may be mounted at
 * once, and they come and go with the page.
 */
export function TamaguiScope({ children }: { children: ReactNode }) {
  const { resolved } = useThemeSetting()
  const latest = useRef(resolved)
  useIsomorphicLayoutEffect(() => {
    latest.current = resolved
  }, [resolved])
  // Tamagui's provider takes its theme class off <html> when it unmounts (it assumes it is the app's only one), e.g.
  // when the page leaves for one without Tamagui. The ThemeProvider owns that class: put it back once the commit
  // that removed it is over (before the next paint).
  useIsomorphicLayoutEffect(
    () => () => {
      queueMicrotask(() => applyToDocument(latest.current))
    },
    [],
  )
  return (
    <TamaguiProvider config={config} defaultTheme={resolved} disableInjectCSS>
      {children}
    </TamaguiProvider>
  )
}

/**
 * A page that renders Tamagui components: rendered inside a TamaguiScope, keeping its own layout (`getLayout`).
 * Like `withApi` (lib/api-provider.tsx), so Tamagui's runtime is in that page's chunks and not in _app.
 */
export function withTamagui<P extends object>(Page: ComponentType<P> & { getLayout?: unknown }): ComponentType<P> & { getLayout?: unknown } {
  function TamaguiPage(props: P) {
    return (
      <TamaguiScope>
        <Page {...props} />
      </TamaguiScope>
    )
  }
  TamaguiPage.displayName = `withTamagui(${Page.displayName ?? Page.name})`
  if (Page.getLayout) return Object.assign(TamaguiPage, { getLayout: Page.getLayout })
  return TamaguiPage
}
