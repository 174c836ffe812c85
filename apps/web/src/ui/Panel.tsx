import { styled, YStack } from 'tamagui'

/**
 * The raised surface the app's forms and sections sit on: a step lighter than the page, a hairline border, large
 * corners, roomier from the sm breakpoint. Any prop (render="section", boxShadow, gap…) adjusts one use.
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

/** The soft shadow of a panel that stands alone on the page (auth cards, the status card). */
export const PANEL_SHADOW = '0 1px 2px rgba(0,0,0,0.04), 0 8px 24px -16px rgba(0,0,0,0.18)'
