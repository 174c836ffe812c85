import { useMutation, useQuery } from '@tanstack/react-query'
import { Button, H2, Text, Theme, XStack, YStack } from 'tamagui'

import { useTRPC } from '../../lib/trpc'
import { ActivityIcon, RefreshIcon, SpinnerIcon } from '../../ui/icons'
import { toast } from '../toast'
import { Panel, PANEL_SHADOW } from '../../ui/Panel'

function Skeleton({ width, height = 16 }: { width: number; height?: number }) {
  return <YStack className="skeleton" width={width} height={height} borderRadius="$2" backgroundColor="$color4" />
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <YStack
      gap="$1"
      paddingVertical="$2.5"
      borderTopWidth={1}
      borderTopColor="$borderColor"
      $sm={{ flexDirection: 'row', alignItems: 'center', justifyContent: 'space-between', gap: '$4' }}
    >
      <Text fontSize="$3" color="$color10" flexShrink={0}>
        {label}
      </Text>
      <YStack minWidth={0} $sm={{ alignItems: 'flex-end' }}>
        {children}
      </YStack>
    </YStack>
  )
}

const valueProps = { fontSize: '$4', color: '$color12', fontFamily: '$body' } as const

/**
 * Live status of the app's own API: `system.health` and `system.config` load in the same render, so the
 * client batches them into one GET. "Check connection" runs the `system.clockSkew` mutation (POST).
 */
export function SystemStatusCard() {
  const trpc = useTRPC()
  const health = useQuery(trpc.system.health.queryOptions())
  const config = useQuery(trpc.system.config.queryOptions())
  const clockSkew = useMutation(
    trpc.system.clockSkew.mutationOptions({
      onSuccess: ({ skewMs }) => {
        const direction = skewMs === 0 ? 'in sync' : skewMs > 0 ? 'ahead of this device' : 'behind this device'
        toast.success('Connected', `The server answered; its clock is ${Math.abs(skewMs)} ms ${direction}.`)
      },
      onError: (error) => toast.error('Connection check failed', error.message),
    }),
  )

  const loading = health.isPending || config.isPending
  const error = health.error ?? config.error

  return (
    <Panel
      render="section"
      aria-labelledby="system-status-heading"
      gap="$3"
      $sm={{ padding: '$5' }}
      boxShadow={PANEL_SHADOW}
    >
      <XStack alignItems="center" justifyContent="space-between" gap="$3" flexWrap="wrap">
        <XStack alignItems="center" gap="$2.5">
          <Theme name={error ? 'red' : 'green'}>
            <YStack
              width={32}
              height={32}
              borderRadius="$4"
              alignItems="center"
              justifyContent="center"
              backgroundColor="$color3"
            >
              <Text color="$color10" display="flex">
                <ActivityIcon size={17} />
              </Text>
            </YStack>
          </Theme>
          <H2 aria-level={2} id="system-status-heading" fontSize="$6" lineHeight="$6" fontWeight="600" color="$color12">
            System status
          </H2>
        </XStack>
        {!loading && !error ? (
          <Theme name="green">
            <XStack
              alignItems="center"
              gap="$1.5"
              backgroundColor="$color3"
              borderRadius="$12"
              paddingHorizontal="$2.5"
              paddingVertical="$1"
            >
              <YStack width={7} height={7} borderRadius={7} backgroundColor="$color9" />
              <Text fontSize="$2" fontWeight="600" color="$color12">
                Operational
              </Text>
            </XStack>
          </Theme>
        ) : null}
      </XStack>

      {error ? (
        <Theme name="red">
          <YStack role="alert" gap="$3" padding="$3.5" borderRadius="$6" backgroundColor="$color2" borderWidth={1} borderColor="$color6">
            <Text fontSize="$4" fontWeight="600" color="$color11">
              Could not reach the API
            </Text>
            <Text fontSize="$3" color="$color11">
              {error.message}
            </Text>
            <XStack>
              <Button
                size="$3"
                gap="$1.5"
                borderWidth={1}
                borderColor="$color7"
                icon={<RefreshIcon size={16} />}
                onPress={() => {
                  void health.refetch()
                  void config.refetch()
                }}
              >
                Retry
              </Button>
            </XStack>
          </YStack>
        </Theme>
      ) : (
        <YStack aria-busy={loading}>
          <Row label="Server time">
            {health.data ? (
              <Text {...valueProps} data-testid="server-time">
                {health.data.time.toISOString()}
              </Text>
            ) : (
              <Skeleton width={210} />
            )}
          </Row>
          <Row label="Version">
            {health.data ? (
              <Text {...valueProps} data-testid="app-version">
                {health.data.version}
              </Text>
            ) : (
              <Skeleton width={60} />
            )}
          </Row>
          <Row label="Backend">
            {config.data ? (
              <XStack alignItems="center" gap="$2" flexWrap="wrap">
                <Text {...valueProps} data-testid="backend-url" wordWrap="break-word">
                  {config.data.supabaseUrl}
                </Text>
                <Theme name={config.data.backend === 'local' ? 'blue' : 'yellow'}>
                  <Text
                    fontSize="$1"
                    fontWeight="600"
                    color="$color12"
                    backgroundColor="$color3"
                    borderRadius="$3"
                    paddingHorizontal="$1.5"
                    paddingVertical={2}
                  >
                    {config.data.backend}
                  </Text>
                </Theme>
              </XStack>
            ) : (
              <Skeleton width={180} />
            )}
          </Row>
        </YStack>
      )}

      <XStack paddingTop="$1">
        <Button
          size="$3"
          gap="$1.5"
          theme="accent"
          disabled={clockSkew.isPending}
          opacity={clockSkew.isPending ? 0.7 : 1}
          onPress={() => clockSkew.mutate({ clientTime: new Date() })}
          icon={clockSkew.isPending ? <SpinnerIcon size={16} /> : undefined}
          focusVisibleStyle={{ outlineColor: '$color8', outlineWidth: 2, outlineStyle: 'solid', outlineOffset: 2 }}
        >
          Check connection
        </Button>
      </XStack>
    </Panel>
  )
}
