/**
 * `razao manifest`: the manifestação do destinatário from the command line (issue 35, item 3),
 * what POST /v1/manifestacao does, without a running gateway: the certificate is opened from
 * the store with the gateway's master key (GATEWAY_MASTER_KEY or the development key file), the
 * events are sent to GATEWAY_EVENTO_URL (or the official NFeRecepcaoEvento4 of GATEWAY_TP_AMB)
 * and recorded in the same table. One entry of the command table (server/cli.ts).
 * Exit codes: 0 every event registered (or already), 1 an event or the batch refused or not
 * sent, 2 wrong usage (what the route answers 400).
 */
import { readFile } from 'node:fs/promises'
import type { TpEvento } from '../../core/gateway/index.js'
import { UsageError } from '../cli-usage.js'
import type { CommandSpec, OptionValues } from '../cli-usage.js'
import type { Config } from '../config.js'
import type { Database } from '../database.js'

type WithDatabase = <T>(work: (db: Database) => Promise<T>) => Promise<T>

/** Names a person types, beside the codes. */
const EVENT_NAMES: Record<string, TpEvento> = {
  ciencia: '210210', confirmacao: '210200', desconhecimento: '210220', 'nao-realizada': '210240',
  210210: '210210', 210200: '210200', 210220: '210220', 210240: '210240'
}

export function manifestCommand (env: () => Config, withDatabase: WithDatabase): CommandSpec {
  return {
    usage: [
      ['manifest CHAVE... --empresa CODE --evento E [--justificativa TEXT]', 'send a manifestação do destinatário for 1 to 20 NF-e (JSON of each result)']
    ],
    options: {
      empresa: { type: 'string', value: 'CODE', help: 'the recipient company\'s empresa_codigo (its certificate signs)' },
      evento: { type: 'string', value: 'E', help: 'ciencia (210210), confirmacao (210200), desconhecimento (210220) or nao-realizada (210240)' },
      justificativa: { type: 'string', value: 'TEXT', help: 'required for nao-realizada, optional for desconhecimento: 15 to 255 characters' }
    },
    maxArgs: 20,
    details: 'What POST /v1/manifestacao does, from the database and the certificate store (GATEWAY_MASTER_KEY), sent to\nGATEWAY_EVENTO_URL or the official NFeRecepcaoEvento4 of GATEWAY_TP_AMB. Prints { empresa_codigo, eventos }.\nExit 1 when an event (or the batch) was refused or could not be sent.',
    run: async (args, values) => { await run(args, values, env, withDatabase) }
  }
}

async function run (chaves: string[], values: OptionValues, env: () => Config, withDatabase: WithDatabase): Promise<void> {
  // Loaded when the command runs: its help is all the rest of the command line needs of this module.
  const [{ CertificateStore, TlsAgentCache, isGatewayError, loadMasterKey, sendManifestacoes }, { openPkcs12Isolated }, { loadGatewayConfig }, { readManifestBody, toWireOutcome }, { manifestSenderFor }] = await Promise.all([
    import('../../core/gateway/index.js'), import('../../workers/pkcs12-isolate.js'), import('./config.js'), import('./manifestacao-wire.js'), import('./manifestacao-routes.js')
  ])
  const empresa = typeof values.empresa === 'string' ? values.empresa : undefined
  const evento = typeof values.evento === 'string' ? EVENT_NAMES[values.evento] : undefined
  if (empresa === undefined) throw new UsageError('manifest needs --empresa CODE (the recipient company\'s empresa_codigo); see razao manifest --help')
  if (evento === undefined) throw new UsageError('manifest needs --evento ciencia, confirmacao, desconhecimento or nao-realizada; see razao manifest --help')
  if (chaves.length === 0) throw new UsageError('manifest needs at least one access key (44 digits); see razao manifest --help')
  const justificativa = typeof values.justificativa === 'string' ? values.justificativa : undefined
  let body: ReturnType<typeof readManifestBody>
  try {
    body = readManifestBody({ empresa_codigo: empresa, eventos: chaves.map((chave) => ({ chave, tp_evento: evento, ...(justificativa === undefined ? {} : { justificativa }) })) })
  } catch (e) {
    if (isGatewayError(e) && e.status === 400) throw new UsageError(`${e.detail.replace(/\.$/, '')}; see razao manifest --help`)
    throw e
  }
  const config = env()
  const gateway = loadGatewayConfig(process.env, config.shared)
  const { masterKey } = await loadMasterKey(gateway.masterKey, config.shared.dataDir)
  const agents = new TlsAgentCache({ openPkcs12: openPkcs12Isolated, ...(gateway.caFile === undefined ? {} : { extraCaPem: await readFile(gateway.caFile, 'utf8') }) })
  try {
    await withDatabase(async (db) => {
      const store = new CertificateStore({ pool: db.pool, masterKey, openPkcs12: openPkcs12Isolated })
      const sender = manifestSenderFor({ config: gateway, pool: db.pool, resolveCertificate: (code) => store.resolveCertificate(code) }, agents)
      try {
        const eventos = (await sendManifestacoes(sender, body.empresaCodigo, body.requests)).map(toWireOutcome)
        process.stdout.write(`${JSON.stringify({ empresa_codigo: body.empresaCodigo, eventos }, null, 2)}\n`)
        if (eventos.some((e) => e.situacao !== 'registrado')) process.exitCode = 1
      } catch (e) {
        if (!isGatewayError(e)) throw e
        process.stderr.write(`razao: ${e.detail}${e.body?.cStat === undefined ? '' : ` (cStat ${String(e.body.cStat)})`}\n`)
        process.exitCode = 1
      }
    })
  } finally {
    agents.close()
  }
}
