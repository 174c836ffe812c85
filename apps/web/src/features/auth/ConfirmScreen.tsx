import Link from 'next/link'
import { YStack } from 'tamagui'

import { AuthCard, FormMessage } from './form'

export interface ConfirmScreenProps {
  /** Why the link could not be used (the page only renders when verification failed). */
  error: string
}

/** Shown when an email link could not be verified; successful links never render it (the server redirects). */
export function ConfirmScreen({ error }: ConfirmScreenProps) {
  return (
    <AuthCard title="That link did not work">
      <FormMessage kind="error">{error}</FormMessage>
      <YStack gap="$2" alignItems="flex-start">
        <Link href="/sign-in" className="button-link">
          Go to sign in
        </Link>
        <Link href="/forgot-password" className="text-link">
          Request a new password-reset link
        </Link>
      </YStack>
    </AuthCard>
  )
}
