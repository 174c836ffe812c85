import Head from 'next/head'
import Link from 'next/link'
import { H1, Paragraph, Text, YStack } from 'tamagui'

import { SITE_TITLE } from '../lib/site'

export default function NotFoundPage() {
  return (
    <YStack alignItems="center" paddingVertical="$10" gap="$3">
      <Head>
        <title>{`Page not found · ${SITE_TITLE}`}</title>
      </Head>
      <Text fontSize="$2" fontWeight="600" letterSpacing={1.2} textTransform="uppercase" color="$color10">
        Error 404
      </Text>
      <H1 aria-level={1} fontSize="$9" lineHeight="$9" fontWeight="800" color="$color12" textAlign="center">
        Page not found
      </H1>
      <Paragraph fontSize="$5" lineHeight="$5" color="$color11" textAlign="center" maxWidth={420}>
        The address may be mistyped, or the page has moved.
      </Paragraph>
      <Link href="/" className="button-link">
        Back to the start page
      </Link>
    </YStack>
  )
}
