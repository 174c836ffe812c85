import Link from 'next/link'
import { H1, Paragraph, Text, XStack, YStack } from 'tamagui'

import { TryAsGuest } from './TryAsGuest'
import { SystemStatusCard } from '../system'

function Hint({ keys, children }: { keys: string; children: React.ReactNode }) {
  return (
    <XStack alignItems="center" gap="$2">
      <Text
        render="kbd"
        fontSize="$2"
        fontWeight="600"
        color="$color11"
        borderWidth={1}
        borderColor="$borderColor"
        borderBottomWidth={2}
        borderRadius="$3"
        paddingHorizontal="$1.5"
        minWidth={24}
        textAlign="center"
      >
        {keys}
      </Text>
      <Text fontSize="$3" color="$color11">
        {children}
      </Text>
    </XStack>
  )
}

/**
 * The signed-out landing page: what Foyer is, the way in (sign up / sign in / try it as a guest), keyboard hints, the
 * live system status.
 */
export function HomeScreen() {
  return (
    <YStack gap="$7" $lg={{ flexDirection: 'row', alignItems: 'flex-start', justifyContent: 'space-between', gap: '$9' }}>
      <YStack gap="$4" maxWidth={560} $lg={{ flex: 1 }}>
        <Text fontSize="$2" fontWeight="600" letterSpacing={1.2} textTransform="uppercase" color="$color10">
          Your workspace
        </Text>
        <H1
          aria-level={1}
          fontSize="$10"
          lineHeight="$10"
          fontWeight="800"
          color="$color12"
          letterSpacing={-1}
          $upTo390={{ fontSize: '$9', lineHeight: '$9' }}
        >
          Welcome to Foyer
        </H1>
        <Paragraph fontSize="$5" lineHeight="$5" color="$color11">
          A calm place to keep your notes. Capture a thought in a second, pin what matters, and find it again in a
          sorted, searchable list — on your laptop or your phone, in light or dark. Private to you, with two-factor
          sign-in when you want it.
        </Paragraph>
        <XStack gap="$3" flexWrap="wrap" alignItems="flex-start">
          <Link href="/sign-up" className="button-link button-link--primary">
            Create an account
          </Link>
          <Link href="/sign-in" className="button-link">
            Sign in
          </Link>
          <TryAsGuest />
        </XStack>
        <YStack gap="$2.5" paddingTop="$2">
          <Text fontSize="$2" fontWeight="600" letterSpacing={1.2} textTransform="uppercase" color="$color10">
            Once you are in
          </Text>
          <Hint keys="N">writes a new note</Hint>
          <Hint keys="F8">jumps to notifications</Hint>
          <Hint keys="Esc">closes dialogs and notifications</Hint>
        </YStack>
      </YStack>
      <YStack width="100%" $lg={{ width: 440, flexShrink: 0 }}>
        <SystemStatusCard />
      </YStack>
    </YStack>
  )
}
