import { styled, YStack } from 'tamagui'

/**
 * The raised surface the app's forms and sections sit on: a step lighter than the page, a hairline border, large
 * corners, roomier from the sm breakpoint. Any prop (render="section", boxShadow, gap…) adjusts one use. For the
 * screens that still render Tamagui components (settings, security); plain-HTML screens use panel.module.css, which
 * draws the same (ADR 053).
 */
export const Panel = styled(YStack, {
  name: 'Panel',
  backgroundColor: '$backgroundHover',
  borderWidth: 1,
  borderColor: '$borderColor',
  borderRadius: '$8',
  padding: '$4',
  gap: '$4',
  $sm: { padding: '$6' },
})
