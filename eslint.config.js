// Lint: typescript-eslint's recommended rules plus the dependency direction of
// The dependency rules — server -> workers -> core, plugins -> core/plugin-api only — and no cycles.
import tseslint from 'typescript-eslint'
import importX from 'eslint-plugin-import-x'

const restrict = (patterns) => ({ 'no-restricted-imports': ['error', { patterns }] })

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', '.data/**', 'tmp/**', 'fixtures/generated/**', 'bench/out/**'] },
  ...tseslint.configs.recommended,
  {
    plugins: { 'import-x': importX },
    rules: {
      'import-x/no-cycle': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error'
    }
  },
  {
    files: ['core/**/*.ts'],
    rules: restrict([
      { group: ['**/server/**', '**/server', '**/workers/**', '**/workers', '**/plugins/**', '**/plugins', '**/bench/**', '**/fixtures/**'], message: 'core/ imports nothing of server, workers, plugins, bench or fixtures (dependency direction).' },
      { group: ['fastify', '@fastify/*', 'piscina'], message: 'core/ has no HTTP and no thread pool.' }
    ])
  },
  {
    files: ['core/**/*.test.ts'],
    rules: restrict([
      { group: ['**/server/**', '**/server', '**/workers/**', '**/workers', '**/plugins/**', '**/plugins'], message: 'core tests exercise core only.' }
    ])
  },
  {
    files: ['workers/**/*.ts'],
    rules: restrict([
      { group: ['**/server/**', '**/server', '**/bench/**', '**/fixtures/**'], message: 'workers/ are called by server/, never the reverse.' }
    ])
  },
  {
    // Worker tests may build their inputs with the fixtures, as core tests do.
    files: ['workers/**/*.test.ts'],
    rules: restrict([
      { group: ['**/server/**', '**/server', '**/bench/**'], message: 'workers/ are called by server/, never the reverse.' }
    ])
  },
  // Plugins: a plugin's modules reach outside their folder only for core/plugin-api.js and
  // their family's shared modules (plugins/_shared/<family>/, docs/plugins.md); a shared
  // module reaches only core/plugin-api.js (and its own folder). Fixture generators may
  // also use the shared writers in fixtures/. The registry imports plugin folders and the
  // API. Regexes, because a glob such as '../*/**' also matches '../../core/plugin-api.js'.
  {
    files: ['plugins/*/*.ts'],
    ignores: ['plugins/**/*.test.ts', 'plugins/_shared/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./(?!\\.\\./core/plugin-api\\.js$|_shared/[a-z0-9-]+/[a-z0-9-]+\\.js$)', message: 'A plugin imports only core/plugin-api.js, its own folder and its family\'s modules in plugins/_shared/<family>/ (docs/plugins.md).' }] }] }
  },
  {
    files: ['plugins/_shared/*/*.ts'],
    ignores: ['plugins/**/*.test.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./(?!\\.\\./\\.\\./core/plugin-api\\.js$)', message: 'A shared family module imports only core/plugin-api.js and its own folder: never a plugin (docs/plugins.md).' }] }] }
  },
  {
    files: ['plugins/*/fixtures/**/*.ts'],
    ignores: ['plugins/_shared/**'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./\\.\\./(?!\\.\\./(?:fixtures/|core/plugin-api\\.js$)|_shared/[a-z0-9-]+/(?:fixtures/)?[a-z0-9-]+\\.js$)', message: 'A plugin\'s fixture generator imports its own plugin, core/plugin-api.js, fixtures/ and its family\'s shared modules only.' }] }] }
  },
  {
    files: ['plugins/_shared/*/fixtures/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./\\.\\./(?!\\.\\./\\.\\./(?:fixtures/|core/plugin-api\\.js$))', message: 'A shared fixture module imports its family\'s modules, core/plugin-api.js and fixtures/ only.' }] }] }
  },
  {
    files: ['plugins/index.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [{ regex: '^\\.\\./(?!core/plugin-api\\.js$)', message: 'The registry imports plugin folders and core/plugin-api.js only.' }] }] }
  },
  {
    files: ['server/**/*.ts'],
    ignores: ['server/**/*.test.ts', 'server/samples.ts'],
    rules: restrict([
      { group: ['**/plugins/**', '**/plugins', '**/bench/**', '**/fixtures/**'], message: 'server/ reaches plugins through workers/ (dependency direction).' }
    ])
  },
  {
    // `razao samples` writes the files the generators of the tests make: it alone reaches them.
    files: ['server/samples.ts'],
    rules: restrict([{ group: ['**/bench/**', '**/plugins/*/index.js', '**/plugins/*/parse.js'], message: 'server/samples.ts uses fixture generators only.' }])
  },
  {
    files: ['server/**/*.ts', 'workers/**/*.ts', 'core/**/*.ts', 'plugins/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-console': 'error'
    }
  },
  {
    // Tests read JSON bodies of known shape; typing every nested field adds nothing.
    files: ['**/*.test.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' }
  }
)
