/**
 * The conventions every `razao` command follows, from one table of commands (server/cli.ts
 * COMMANDS): `razao --help` and `razao --version`, `razao COMMAND --help`, and exit 2 with
 * our own message for every usage error (an unknown command or option, an option missing
 * its value, a value given to a switch), never Node's raw parseArgs text.
 *
 * A new command joins with one entry in COMMANDS: its usage lines (each with what it does),
 * its options (each with a line of help) and its `run`. Its options are the only ones its
 * command line accepts, so parsing, help and refusals need nothing more.
 */
import { parseArgs } from 'node:util'

/** Wrong usage: exit 2, the message on stderr. */
export class UsageError extends Error {
  constructor (message: string) {
    super(message)
    this.name = 'UsageError'
  }
}

export interface OptionSpec {
  /** `string` takes a value (`--limit N`); `boolean` is a switch. */
  type: 'string' | 'boolean'
  /** What the value is, in the usage text (`N`, `FILE`, `CODE`). */
  value?: string
  /** A one-letter form (`-o`). */
  short?: string
  help: string
}

/** Option values as parsed: a string for an option with a value, true for a switch given. */
export type OptionValues = Record<string, string | boolean | undefined>

export interface CommandSpec {
  /** Synopses after `razao `, each with what it does (shown in `razao --help`). */
  usage: Array<[synopsis: string, does?: string]>
  options: Record<string, OptionSpec>
  /** More to say in `razao COMMAND --help` (inputs, output, exit codes). */
  details?: string
  /** The most arguments (positionals) it takes; more is a usage error. Unbounded when absent. */
  maxArgs?: number
  run: (positionals: string[], values: OptionValues) => Promise<void>
}

export type CommandTable = Record<string, CommandSpec>

export type Parsed =
  | { kind: 'help', text: string }
  | { kind: 'version' }
  | { kind: 'run', name: string, command: CommandSpec, positionals: string[], values: OptionValues }

/** The command comes first (`razao COMMAND [ARGS] [OPTIONS]`); before it only --help and --version. */
export function parseCommandLine (table: CommandTable, argv: string[], footer: string): Parsed {
  const [first, ...rest] = argv
  if (first === undefined || first === '--help' || first === '-h') return { kind: 'help', text: generalHelp(table, footer) }
  if (first === '--version' || first === '-V') return { kind: 'version' }
  if (first === 'help') {
    const about = rest[0]
    if (about === undefined) return { kind: 'help', text: generalHelp(table, footer) }
    return { kind: 'help', text: commandHelp(about, lookUp(table, about)) }
  }
  if (first.startsWith('-')) throw new UsageError(`unknown option ${first.split('=')[0]!}: the command comes first (razao COMMAND [options]); see razao --help`)
  const command = lookUp(table, first)
  let parsed
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      strict: true,
      options: { ...Object.fromEntries(Object.entries(command.options).map(([name, o]) => [name, { type: o.type, ...(o.short === undefined ? {} : { short: o.short }) }])), help: { type: 'boolean', short: 'h' } }
    })
  } catch (err) {
    throw new UsageError(describeParseError(first, command, err))
  }
  if (parsed.values.help === true) return { kind: 'help', text: commandHelp(first, command) }
  const { help: _help, ...values } = parsed.values
  if (command.maxArgs !== undefined && parsed.positionals.length > command.maxArgs) {
    const extra = parsed.positionals.slice(command.maxArgs).map((a) => `"${a}"`).join(' ')
    throw new UsageError(`${first} takes at most ${command.maxArgs} argument${command.maxArgs === 1 ? '' : 's'}; not expected: ${extra}; see razao ${first} --help`)
  }
  return { kind: 'run', name: first, command, positionals: parsed.positionals, values }
}

function lookUp (table: CommandTable, name: string): CommandSpec {
  const command = Object.hasOwn(table, name) ? table[name] : undefined
  if (command === undefined) throw new UsageError(`unknown command "${name}"; the commands are ${Object.keys(table).join(', ')}; see razao --help`)
  return command
}

/** parseArgs's errors in our words: which option, of which command, and where its help is. */
function describeParseError (name: string, command: CommandSpec, err: unknown): string {
  const code = (err as { code?: unknown }).code
  const message = err instanceof Error ? err.message : String(err)
  const option = /'(-[^' ]*)/.exec(message)?.[1]?.replace(/^(--[^=]+)=.*$/, '$1')
  const accepted = Object.keys(command.options).map((o) => `--${o}`)
  const see = `see razao ${name} --help`
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    return `unknown option ${option ?? ''} for razao ${name}; ${accepted.length === 0 ? 'it takes no options' : `it accepts ${accepted.join(', ')}`}; ${see}`
  }
  if (code === 'ERR_PARSE_ARGS_INVALID_OPTION_VALUE') {
    const spec = option === undefined ? undefined : command.options[option.replace(/^--?/, '')]
    if (spec?.type === 'string') return `option ${option!} needs a value (${option!} ${spec.value ?? 'VALUE'}); ${see}`
    return `option ${option ?? ''} is a switch and takes no value; ${see}`
  }
  return `cannot read the command line (${message}); ${see}`
}

const COLUMN = 56

function synopsisLines (usage: CommandSpec['usage']): string {
  let text = ''
  for (const [synopsis, does] of usage) {
    const left = synopsis === '' ? '' : `  razao ${synopsis}`
    if (does === undefined) text += `${left}\n`
    else if (left.length < COLUMN) text += `${left.padEnd(COLUMN)}${does}\n`
    else text += `${left}\n${' '.repeat(COLUMN)}${does}\n`
  }
  return text
}

export function generalHelp (table: CommandTable, footer: string): string {
  return `razao — back-office services of the firm

Usage:
${Object.values(table).map((c) => synopsisLines(c.usage)).join('')}${synopsisLines([['COMMAND --help', 'a command\'s options and details'], ['--version', 'the version of razao']])}
A FILE argument of - reads standard input. Exit codes: 0 done, 1 the file or operation
failed, 2 wrong usage or configuration.

${footer}`
}

export function commandHelp (name: string, command: CommandSpec): string {
  let text = `Usage:\n${synopsisLines(command.usage)}`
  const options = Object.entries(command.options)
  if (options.length > 0) {
    text += '\nOptions:\n'
    for (const [option, spec] of options) {
      const left = `  ${spec.short === undefined ? '' : `-${spec.short}, `}--${option}${spec.type === 'string' ? ` ${spec.value ?? 'VALUE'}` : ''}`
      text += left.length < 26 ? `${left.padEnd(26)}${spec.help}\n` : `${left}\n${' '.repeat(26)}${spec.help}\n`
    }
  }
  text += `  --help, -h              this text\n`
  if (command.details !== undefined) text += `\n${command.details.trim()}\n`
  text += `\nSee docs/cli.md. razao ${name}: exit 0 done, 1 the file or operation failed, 2 wrong usage or configuration.\n`
  return text
}
