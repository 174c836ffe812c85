import { defineConfig } from 'vitest/config'

export default defineConfig({
  define: {
    'process.env.TAMAGUI_TARGET': JSON.stringify('web'),
  },
  test: {
    environment: 'node',
    include: ['src/**/*.test.{ts,tsx}'],
    restoreMocks: true,
  },
})
