/**
 * `razao documents list|get`: the answers of GET /v1/documents and GET /v1/documents/{chave}
 * (issue 35), straight from the database (no service needs to run), as JSON on stdout;
 * `get CHAVE --xml` writes the document's XML instead. Its own options, read here, so the
 * main command line stays as it is. Exit codes as the rest of the CLI: 2 wrong usage (a
 * field the API would answer 400), 1 no such document.
 */
import { parseArgs } from 'node:util'
import { getDocument, isGatewayError, listDocuments } from '../../core/gateway/index.js'
import type { Database } from '../database.js'
import { readChave, readDocumentFilter } from './document-wire.js'

export const DOCUMENTS_HELP = `  razao documents list [--cnpj C] [--desde YYYY-MM-DD] [--ate YYYY-MM-DD] [--tipo T] [--situacao S] [--limite N] [--apos ID]
                                                        the documents the gateway kept, newest first, as JSON (GET /v1/documents)
  razao documents get CHAVE [--xml]                     one document and its events (GET /v1/documents/{chave}), or its XML
`

export async function documentsCommand (
  argv: string[], withDatabase: <T>(work: (db: Database) => Promise<T>) => Promise<T>, usage: (message: string) => Error
): Promise<void> {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        cnpj: { type: 'string' },
        desde: { type: 'string' },
        ate: { type: 'string' },
        tipo: { type: 'string' },
        situacao: { type: 'string' },
        limite: { type: 'string' },
        apos: { type: 'string' },
        xml: { type: 'boolean' }
      }
    })
  } catch (e) {
    throw usage(`${(e as Error).message}; see razao documents --help`)
  }
  const { values, positionals } = parsed
  const [action, chave, extra] = positionals
  if (values.help === true) {
    process.stdout.write(`Usage:\n${DOCUMENTS_HELP}`)
    return
  }
  const asUsage = <T>(read: () => T): T => {
    try {
      return read()
    } catch (e) {
      if (isGatewayError(e) && e.status === 400) throw usage(e.detail)
      throw e
    }
  }
  const print = (value: unknown): void => { process.stdout.write(`${JSON.stringify(value, null, 2)}\n`) }
  switch (action) {
    case 'list': {
      if (chave !== undefined || values.xml === true) throw usage('razao documents list takes only options; see razao documents --help')
      const { xml: _xml, help: _help, ...filters } = values
      const filter = asUsage(() => readDocumentFilter(filters))
      return await withDatabase(async (db) => print(await listDocuments(db.pool, filter)))
    }
    case 'get': {
      if (chave === undefined || extra !== undefined) throw usage('razao documents get needs one access key (44 or 50 digits); see razao documents --help')
      const key = asUsage(() => readChave(chave))
      return await withDatabase(async (db) => {
        const found = await getDocument(db.pool, key)
        if (found === undefined) {
          process.stderr.write(`razao: no document is kept under the access key ${key}\n`)
          process.exitCode = 1
          return
        }
        if (values.xml === true) process.stdout.write(found.xml.endsWith('\n') ? found.xml : `${found.xml}\n`)
        else print({ ...found.documento, eventos: found.eventos })
      })
    }
    default: throw usage(`razao documents ${action ?? ''}: say list or get; see razao documents --help`)
  }
}
