// Flat ESLint config for the web app: TypeScript (type-aware), React hooks rules, and the feature-folder
// boundary (features import each other only through their index file).
import js from '@eslint/js'
import reactHooks from 'eslint-plugin-react-hooks'
import globals from 'globals'
import tseslint from 'typescript-eslint'

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
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // ../toast/toast-store (a sibling feature's file) — but not ../../ui/icons or ../toast
              regex: '^\\.\\./(?!\\.)[^/]+/(?!index$).+',
              message: 'Import another feature only through its index (e.g. "../toast"), never its files.',
            },
          ],
        },
      ],
    },
  },
  {
    // The boundary rule is for src/features; pages, server and tests reach into their own folders freely.
    files: ['src/pages/**', 'src/server/**', 'src/lib/**', 'src/ui/**', '**/*.test.{ts,tsx}', '*.config.*', 'scripts/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
)
