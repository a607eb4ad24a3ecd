/**
 * The environment a package process runs with: an allow-list, not the agent's environment
 * minus a deny-list. A deny-list of name patterns (`…_API_KEY`, `…_PASSWORD`) let through
 * every secret named otherwise: the gateway's master key, a time-stamp URL with a password
 * inside it. A package gets what any program needs to run, the job's own `AGENT_*`
 * variables, and the variables its descriptor declares (`env` in automation.json).
 */

/** What every program may need: the search path, locale and time zone, home and temp folders. */
const ALWAYS = new Set(['PATH', 'HOME', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TMP', 'TEMP'])
/** LC_ALL, LC_CTYPE, … */
const LOCALE = /^LC_[A-Z]+$/
/**
 * What a Windows program cannot start without (names compared without regard to case
 * there): the system folders, the shell, the executable extensions, the user's profile.
 */
const WINDOWS = new Set(['SYSTEMROOT', 'WINDIR', 'COMSPEC', 'PATHEXT', 'SYSTEMDRIVE', 'USERPROFILE', 'APPDATA', 'LOCALAPPDATA', 'PROGRAMDATA', 'PROGRAMFILES', 'PROGRAMFILES(X86)', 'NUMBER_OF_PROCESSORS', 'PROCESSOR_ARCHITECTURE'])

/**
 * Names a descriptor may not declare: the settings of this project's services (their keys,
 * tokens and master key among them), the database, and the agent's own `AGENT_*` names,
 * which the agent sets for each job.
 */
export const RESERVED_ENV = /^(?:AGENT_|GATEWAY_|SIGN_|EXTRACT_|IMPORT_|RAZAO_|PG)|^DATABASE_URL$/i
/** A variable name a descriptor may declare (POSIX portable names). */
export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/

/**
 * The package's environment: the allowed names present in the agent's environment, the
 * declared ones, then the job's variables (which nothing can override).
 */
export function packageEnvironment (agentEnv: NodeJS.ProcessEnv, declared: readonly string[], job: Record<string, string>): NodeJS.ProcessEnv {
  const wanted = new Set(declared)
  const windows = process.platform === 'win32'
  const out: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(agentEnv)) {
    if (value === undefined) continue
    const upper = name.toUpperCase()
    const allowed = ALWAYS.has(windows ? upper : name) || LOCALE.test(name) || (windows && WINDOWS.has(upper)) ||
      (wanted.has(name) && !RESERVED_ENV.test(name))
    if (allowed) out[name] = value
  }
  return { ...out, ...job }
}
