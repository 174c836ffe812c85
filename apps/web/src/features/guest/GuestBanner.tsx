import Link from 'next/link'
import { useState } from 'react'
import { Button, Paragraph, Text, Theme, XStack } from 'tamagui'

import { InfoIcon } from '../../ui/icons'
import { ADD_EMAIL_PATH, GUEST_BANNER_HIDE_DAYS, guestBannerDismissCookie } from '../../lib/guest'

/**
 * Under the header on every page of a guest session: the notes live only in this browser until the guest adds an
 * email and password (the link goes there). "Hide for a week" sets a cookie naming this guest, so the server renders
 * the next pages without the banner (no flash), and moves focus to the page's main content.
 */
export function GuestBanner({ userId, dismissed }: { userId: string; dismissed: boolean }) {
  const [hidden, setHidden] = useState(dismissed)
  if (hidden) return null

  function hide() {
    document.cookie = guestBannerDismissCookie(userId, window.location.protocol === 'https:')
    setHidden(true)
    document.getElementById('main')?.focus()
  }

  return (
    <Theme name="yellow">
      <XStack
        render="aside"
        aria-label="Guest session"
        data-testid="guest-banner"
        backgroundColor="$color3"
        borderBottomWidth={1}
        borderBottomColor="$color6"
      >
        <XStack
          width="100%"
          maxWidth={1200}
          marginHorizontal="auto"
          paddingHorizontal="$3"
          paddingVertical="$2.5"
          $sm={{ paddingHorizontal: '$5' }}
          $lg={{ paddingHorizontal: '$6' }}
          gap="$3"
          alignItems="center"
          flexWrap="wrap"
        >
          <Text color="$color11" display="flex" aria-hidden>
            <InfoIcon size={18} />
          </Text>
          <Paragraph flex={1} minWidth={220} fontSize="$3" lineHeight="$3" color="$color12">
            You are using Foyer as a guest. Your notes live only in this browser until you add an email and password.
          </Paragraph>
          <XStack gap="$2" alignItems="center" flexWrap="wrap">
            <Link href={ADD_EMAIL_PATH} className="button-link button-link--compact">
              Add email and password
            </Link>
            <Button
              size="$3"
              chromeless
              onPress={hide}
              focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
            >
              <Text fontSize="$3" fontWeight="600" color="$color12">
                {GUEST_BANNER_HIDE_DAYS === 7 ? 'Hide for a week' : `Hide for ${GUEST_BANNER_HIDE_DAYS} days`}
              </Text>
            </Button>
          </XStack>
        </XStack>
      </XStack>
    </Theme>
  )
}
