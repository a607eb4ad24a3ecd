import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['core/**/*.test.ts', 'plugins/**/*.test.ts', 'server/**/*.test.ts', 'workers/**/*.test.ts', 'fixtures/**/*.test.ts'],
    testTimeout: 60_000,
    // expect.poll waits for what a page or a process shows; one second (the default) is too
    // short on a loaded 2-core machine running three test files at once.
    expect: { poll: { timeout: 15_000 } },
    hookTimeout: 120_000,
    pool: 'forks',
    // Vitest's default is one worker per core but one, i.e. a single worker on the 2-core CI
    // machine, so the files ran one after another although most of their time is spent
    // waiting on PostgreSQL, child processes, TLS, Chromium or LibreOffice. Three forks keep
    // both cores busy; every file keeps its own ports (0), folders (mkdtemp) and database.
    maxWorkers: 3,
    minWorkers: 1,
    // One PostgreSQL server per run (embedded unless DATABASE_URL is set), with the migrations
    // applied once to a template that each file's database copies.
    globalSetup: ['fixtures/db/global-setup.ts'],
    // Every JSON answer of the apps under test is checked against its route's response schema.
    setupFiles: ['fixtures/http/response-schemas.ts']
  }
})
