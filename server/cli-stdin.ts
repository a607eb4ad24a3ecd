/**
 * `-` as a file argument of `razao`: standard input. The readers need a file they can
 * open more than once (format sniffing, the hash, the sheet's parts, an XLS isolate), so
 * the input is first copied into a private temporary folder, removed when the command ends.
 */
import { createWriteStream, rmSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { basename, join } from 'node:path'
import { pipeline } from 'node:stream/promises'
import { Transform } from 'node:stream'
import { EngineError } from '../core/errors.js'
import { UsageError } from './cli-usage.js'

/** The name a file read from standard input is given in answers (`file_name`, `nome_arquivo`). */
export const STDIN_NAME = 'stdin'

/** A file argument as the command reads it: `name` for answers, `path` to open. */
export interface InputFile { path: string, name: string, fromStdin: boolean }

function refuseTerminal (stdin: NodeJS.ReadStream): void {
  if (stdin.isTTY === true) throw new UsageError('- reads standard input, which is a terminal here; pipe or redirect a file into it (razao COMMAND - < FILE)')
}

/**
 * Runs `work` on each argument, `-` spooled from standard input first (at most once:
 * standard input can be read only one time). `maxBytes` bounds the copy.
 */
export async function withInputFiles<T> (args: string[], work: (files: InputFile[]) => Promise<T>, options: { maxBytes?: number, stdin?: NodeJS.ReadStream } = {}): Promise<T> {
  if (args.filter((a) => a === '-').length > 1) throw new UsageError('- (standard input) can be given once only')
  if (!args.includes('-')) return await work(args.map((path) => ({ path, name: basename(path), fromStdin: false })))
  const stdin = options.stdin ?? process.stdin
  refuseTerminal(stdin)
  const dir = await mkdtemp(join(tmpdir(), 'razao-stdin-'))
  // A command may leave through process.exit (a reader gone: `razao rows - | head`; a second
  // Ctrl-C), which runs no finally: the copy goes then too.
  const removeAtExit = (): void => { rmSync(dir, { recursive: true, force: true }) }
  process.once('exit', removeAtExit)
  try {
    const path = join(dir, 'input')
    await pipeline(stdin, bounded(options.maxBytes), createWriteStream(path, { mode: 0o600 }))
    return await work(args.map((a) => a === '-' ? { path, name: STDIN_NAME, fromStdin: true } : { path: a, name: basename(a), fromStdin: false }))
  } finally {
    process.off('exit', removeAtExit)
    await rm(dir, { recursive: true, force: true })
  }
}

/** `withInputFiles` for a command that reads one file. */
export async function withInputFile<T> (arg: string, work: (file: InputFile) => Promise<T>, options: { maxBytes?: number, stdin?: NodeJS.ReadStream } = {}): Promise<T> {
  return await withInputFiles([arg], async (files) => await work(files[0]!), options)
}

function bounded (maxBytes: number | undefined): Transform {
  let seen = 0
  return new Transform({
    transform (chunk: Buffer, _encoding, done) {
      seen += chunk.length
      if (maxBytes !== undefined && seen > maxBytes) done(new EngineError('REQUEST_TOO_LARGE', `Standard input is larger than this command accepts (${maxBytes} bytes).`))
      else done(null, chunk)
    }
  })
}

/** A small input (a key) read whole from standard input, refused past `maxBytes`. */
export async function readStdin (maxBytes: number, stdin: NodeJS.ReadStream = process.stdin): Promise<Buffer> {
  refuseTerminal(stdin)
  const chunks: Buffer[] = []
  let seen = 0
  for await (const chunk of stdin as AsyncIterable<Buffer>) {
    seen += chunk.length
    if (seen > maxBytes) throw new EngineError('REQUEST_TOO_LARGE', `Standard input is longer than expected (${maxBytes} bytes at most).`)
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}
