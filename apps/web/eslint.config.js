// Flat ESLint config for the web app: TypeScript (type-aware), React hooks rules, the feature-folder boundary
// (features import each other only through their index file), and where Tamagui may be imported (ADR 053).
import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

/** ../toast/toast-store (a sibling feature's file) — but not ../../ui/icons or ../toast. */
const featureBoundary = {
  regex: '^\\.\\./(?!\\.)[^/]+/(?!index$).+',
  message: 'Import another feature only through its index (e.g. "../toast"), never its files.',
}

/**
 * Tamagui's runtime is not in _app nor in the pages that are plain HTML (ADR 053): its components are used only by
 * the screens below, which render inside a TamaguiScope (their page exports withTamagui(Page), or the island brings
 * its own). A new file that needs Tamagui joins this list — and its page or island brings the scope.
 */
const tamaguiFiles = [
  'src/ui/config.ts',
  'src/ui/theme-source.ts',
  'src/ui/Panel.tsx',
  'src/features/theme/TamaguiScope.tsx',
  'src/features/mfa/EnrollPanel.tsx',
  'src/features/mfa/SecurityScreen.tsx',
  'src/features/settings/AccountScreen.tsx',
  'src/features/settings/AvatarField.tsx',
  'src/features/settings/AddEmailForm.tsx',
]
const noTamagui = {
  group: ['tamagui', '@tamagui/*'],
  message:
    'Plain HTML with ui/controls.module.css and the Tamagui CSS variables here (ADR 053). A screen that needs Tamagui components goes in tamaguiFiles (eslint.config.js) and renders inside TamaguiScope (withTamagui).',
}
const outsideFeatures = ['src/pages/**', 'src/server/**', 'src/lib/**', 'src/ui/**']

export default tseslint.config(
  { ignores: ['.next/**', 'node_modules/**', 'next-env.d.ts', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.{ts,tsx}'],
    languageOptions: {
      globals: { ...globals.browser, ...globals.node },
    },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      'react-hooks/rules-of-hooks': 'error',
      'react-hooks/exhaustive-deps': 'error',
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', { patterns: [featureBoundary, noTamagui] }],
    },
  },
  {
    // The boundary rule is for src/features; pages, server, lib and ui reach into their own folders freely.
    files: outsideFeatures,
    rules: { 'no-restricted-imports': ['error', { patterns: [noTamagui] }] },
  },
  {
    files: tamaguiFiles,
    rules: { 'no-restricted-imports': ['error', { patterns: [featureBoundary] }] },
  },
  {
    files: [...tamaguiFiles.filter((file) => !file.startsWith('src/features/')), '**/*.test.{ts,tsx}', '*.config.*', 'scripts/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
)
