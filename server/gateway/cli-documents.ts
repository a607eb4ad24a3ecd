/**
 * `razao documents list|get`: the answers of GET /v1/documents and GET /v1/documents/{chave}
 * (issue 35), straight from the database (no service needs to run), as JSON on stdout;
 * `get CHAVE --xml` writes the document's XML instead. One entry of the command table
 * (server/cli.ts). Exit codes as the rest of the CLI: 2 wrong usage (a value the API would
 * answer 400), 1 no document under that key.
 */
import { UsageError } from '../cli-usage.js'
import type { CommandSpec, OptionValues } from '../cli-usage.js'
import type { Database } from '../database.js'
import { MAX_PAGE } from './document-page.js'

type WithDatabase = <T>(work: (db: Database) => Promise<T>) => Promise<T>

export function documentsCommand (withDatabase: WithDatabase): CommandSpec {
  return {
    usage: [
      ['documents list [--cnpj C] [--desde D] [--ate D] [--tipo T] [--situacao S] [--limite N] [--apos ID]', 'the documents the gateway kept, newest first, as JSON'],
      ['documents get CHAVE [--xml]', 'one document and its events, as JSON (or its XML)']
    ],
    options: {
      cnpj: { type: 'string', value: 'C', help: 'only those this company received (punctuation allowed, check digits verified)' },
      desde: { type: 'string', value: 'YYYY-MM-DD', help: 'issue date from (inclusive), as written in the document' },
      ate: { type: 'string', value: 'YYYY-MM-DD', help: 'issue date up to (inclusive)' },
      tipo: { type: 'string', value: 'T', help: 'resNFe, procNFe, resEvento, procEventoNFe, NFS-e or eventoNFS-e' },
      situacao: { type: 'string', value: 'S', help: 'autorizada, denegada, cancelada or registrado' },
      limite: { type: 'string', value: 'N', help: `page size, 1 to ${MAX_PAGE} (default 50)` },
      apos: { type: 'string', value: 'ID', help: 'the previous page\'s proximo: the next page' },
      xml: { type: 'boolean', help: 'get: print the document\'s XML instead of its JSON' }
    },
    maxArgs: 2,
    details: 'The JSON of GET /v1/documents ({ documentos, proximo }) and GET /v1/documents/{chave}, read from the database\n(DATABASE_URL or the embedded one). Exit 1 when no document is kept under CHAVE.',
    run: async (args, values) => { await run(args, values, withDatabase) }
  }
}

async function run ([action, chave]: string[], values: OptionValues, withDatabase: WithDatabase): Promise<void> {
  // Loaded when the command runs: its help is all the rest of the command line needs of this module.
  const [{ getDocument, isGatewayError, listDocuments }, { readChave, readDocumentFilter }] = await Promise.all([import('../../core/gateway/index.js'), import('./document-wire.js')])
  const asUsage = <T>(read: () => T): T => {
    try {
      return read()
    } catch (e) {
      if (isGatewayError(e) && e.status === 400) throw new UsageError(`${e.detail.replace(/\.$/, '')}; see razao documents --help`)
      throw e
    }
  }
  const print = (value: unknown): void => { process.stdout.write(`${JSON.stringify(value, null, 2)}\n`) }
  switch (action) {
    case 'list': {
      if (chave !== undefined || values.xml === true) throw new UsageError('documents list takes only options (--xml is for get); see razao documents --help')
      const filters = Object.fromEntries(Object.entries(values).filter(([name, v]) => name !== 'xml' && typeof v === 'string')) as Record<string, string>
      const filter = asUsage(() => readDocumentFilter(filters))
      return await withDatabase(async (db) => print(await listDocuments(db.pool, filter)))
    }
    case 'get': {
      if (chave === undefined) throw new UsageError('documents get needs an access key (44 or 50 digits); see razao documents --help')
      const others = Object.keys(values).filter((name) => name !== 'xml' && values[name] !== undefined)
      if (others.length > 0) throw new UsageError(`documents get takes only --xml (not --${others[0]!}); see razao documents --help`)
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
    default: throw new UsageError(`${action === undefined ? 'documents needs list or get' : `unknown documents action "${action}": say list or get`}; see razao documents --help`)
  }
}
