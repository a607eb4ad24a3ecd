import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['core/**/*.test.ts', 'plugins/**/*.test.ts', 'server/**/*.test.ts', 'workers/**/*.test.ts', 'fixtures/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One PostgreSQL server per run (embedded unless DATABASE_URL is set).
    globalSetup: ['fixtures/db/global-setup.ts'],
    // Every JSON answer of the apps under test is checked against its route's response schema.
    setupFiles: ['fixtures/http/response-schemas.ts']
  }
})
