import { configDefaults, defineConfig } from 'vitest/config'
import type { TestProjectInlineConfiguration } from 'vitest/config'
import { RUNTIME_SUBSET } from './fixtures/runtime-subset.js'
import SlowFirst from './fixtures/slow-first.js'
import { SAME_IN_EVERY_ZONE } from './fixtures/time-zone-projects.js'

/**
 * RAZAO_TEST_SUBSET=runtime (npm run test:runtime) runs only the runtime subset, under UTC:
 * what CI runs on the Node lines other than the machine's (fixtures/runtime-subset.ts).
 */
const subset = process.env.RAZAO_TEST_SUBSET ?? ''
if (subset !== '' && subset !== 'runtime') throw new Error(`RAZAO_TEST_SUBSET=${subset}: the only subset is "runtime"`)

/** What every project shares (the projects differ only in their files and time zone). */
const common = {
  testTimeout: 60_000,
  // expect.poll waits for what a page or a process shows; one second (the default) is too
  // short on a loaded 2-core machine running three test files at once.
  expect: { poll: { timeout: 15_000 } },
  hookTimeout: 120_000,
  pool: 'forks',
  // Every JSON answer of the apps under test is checked against its route's response schema.
  setupFiles: ['fixtures/http/response-schemas.ts', 'fixtures/file-cost.ts']
} satisfies TestProjectInlineConfiguration['test']

/**
 * The two time zones are two projects of one run, not two `vitest run`s one after the other:
 * one PostgreSQL and one template for both, and the Sao_Paulo files fill the workers while the
 * last slow UTC files finish instead of waiting for them. Each file's process gets its zone
 * through `env` (Node re-reads TZ when it is assigned), and freshDatabase() gives its database
 * the same zone, as a server started under that TZ used to.
 */
const projects: TestProjectInlineConfiguration[] = subset === 'runtime'
  ? [{ test: { ...common, name: 'utc', include: Object.keys(RUNTIME_SUBSET), env: { TZ: 'UTC' } } }]
  : [
  {
    test: {
      ...common,
      name: 'utc',
      include: ['core/**/*.test.ts', 'plugins/**/*.test.ts', 'server/**/*.test.ts', 'workers/**/*.test.ts', 'fixtures/**/*.test.ts', 'bench/**/*.test.ts'],
      env: { TZ: 'UTC' }
    }
  },
  {
    test: {
      ...common,
      // The date-sensitive part again: core, fixtures, the import service over HTTP and the
      // CLI's ledger commands (its help, usage, serve and verify read no date: cli.test.ts).
      // The PDF-reading suites of fixtures/extraction and the OCR tests stay out: like the
      // plugins' tests they read dates only through core/extraction's value readers, whose own
      // tests run in both zones. So do the files of SAME_IN_EVERY_ZONE: no local-time call in
      // the code they test (fixtures/time-zone-projects.test.ts checks it).
      name: 'sao-paulo',
      include: ['core/**/*.test.ts', 'fixtures/**/*.test.ts', 'server/import/app.test.ts', 'server/cli-ledger.test.ts'],
      exclude: [...configDefaults.exclude, 'core/extraction/ocr/**', 'fixtures/extraction/**', ...SAME_IN_EVERY_ZONE.map((z) => z.tests)],
      env: { TZ: 'America/Sao_Paulo' }
    }
  }
]

export default defineConfig({
  test: {
    projects,
    // Vitest's default is one worker per core but one, i.e. a single worker on the 2-core CI
    // machine, so the files ran one after another although most of their time is spent
    // waiting on PostgreSQL, child processes, TLS, Chromium or LibreOffice. Three forks keep
    // both cores busy; every file keeps its own ports (0), folders (mkdtemp) and database.
    maxWorkers: 3,
    minWorkers: 1,
    // One PostgreSQL server per run (embedded unless DATABASE_URL is set), with the migrations
    // applied once to a template that each file's database copies. Declared here, at the root,
    // so it runs once for both projects, which inherit what it provides.
    globalSetup: ['fixtures/db/global-setup.ts'],
    // The slowest files first, on a fresh clone too (fixtures/slow-first.ts).
    sequence: { sequencer: SlowFirst }
  }
})
