import { renderToString } from 'react-dom/server'
import { styled, TamaguiProvider, View } from 'tamagui'
import { describe, expect, it } from 'vitest'

import { config } from './config'
import { tamaguiCSS } from './server-css'

describe("the server's Tamagui stylesheet", () => {
  it("is Tamagui's whole stylesheet: the design system and its themes", () => {
    const css = tamaguiCSS()
    expect(css).toBe(config.getCSS())
    expect(css).toContain('.t_dark')
    expect(css).toContain('.t_light')
    expect(tamaguiCSS()).toBe(css)
  })

  it('takes in the rules of Tamagui components rendered after it was first built', () => {
    const before = tamaguiCSS()
    // a style no other test renders: its atomic rule is new to this process
    const Probe = styled(View, { name: 'ServerCssProbe', width: 1234 })
    const html = renderToString(
      <TamaguiProvider config={config} defaultTheme="light" disableInjectCSS>
        <Probe />
      </TamaguiProvider>,
    )
    const probeClass = /class="[^"]*\b(_width-[^\s"]+)/.exec(html)?.[1]
    expect(probeClass).toBe('_width-1234px')
    expect(before).not.toContain(`.${probeClass}`)
    const after = tamaguiCSS()
    expect(after).toContain(`.${probeClass}`)
    expect(after).toContain('1234px')
    expect(after).toBe(config.getCSS())
  })
})
