import type { ReactElement } from 'react'
import { renderToString } from 'react-dom/server'
import { Text } from 'tamagui'
import { describe, expect, it } from 'vitest'

import { ThemeProvider } from './ThemeProvider'
import { TamaguiScope, withTamagui } from './TamaguiScope'

describe('TamaguiScope and withTamagui', () => {
  it('renders Tamagui components of a page under the theme provider, which itself renders no Tamagui provider', () => {
    const Page = () => <Text data-probe="">tamagui text</Text>
    const Wrapped = withTamagui(Page)
    const html = renderToString(
      <ThemeProvider>
        <Wrapped />
      </ThemeProvider>,
    )
    expect(html).toContain('tamagui text')
    expect(html).toMatch(/class="[^"]*is_Text/)
    // Without a scope the theme provider adds nothing of Tamagui's around plain content.
    expect(renderToString(<ThemeProvider><p>plain</p></ThemeProvider>)).toBe('<p>plain</p>')
  })

  it('keeps the page layout (getLayout) and names the wrapper after the page', () => {
    const getLayout = (page: ReactElement) => <div data-layout="">{page}</div>
    const Page = Object.assign(() => <p>page</p>, { getLayout })
    const Wrapped = withTamagui(Page)
    expect(Wrapped.getLayout).toBe(getLayout)
    expect(Wrapped.displayName).toMatch(/^withTamagui\(/)
  })

  it('needs the theme provider above it (the scheme comes from there)', () => {
    expect(() => renderToString(<TamaguiScope>x</TamaguiScope>)).toThrow(/ThemeProvider/)
  })
})
