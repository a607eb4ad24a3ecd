import { createRequire } from 'node:module'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { Worker } from 'node:worker_threads'
import type { WorkerOptions } from 'node:worker_threads'

/**
 * Worker entry files live beside this module. Built code runs the `.js` files;
 * tests run the TypeScript sources, where a worker needs tsx to load `.ts`.
 */
const sourceMode = import.meta.url.endsWith('.ts')
const extension = sourceMode ? '.ts' : '.js'

export function workerFile (name: string): string {
  return fileURLToPath(new URL(`./${name}${extension}`, import.meta.url))
}

/** execArgv for worker threads: tsx's loader when running from TypeScript sources. */
export const workerExecArgv: string[] = sourceMode ? ['--import', 'tsx'] : []

/**
 * Starts a plain worker thread on workers/<name>. From TypeScript sources, Node 20
 * resolves a Worker's entry before the tsx hooks are in place, so the entry is a
 * one-line script that registers tsx and then imports the module.
 */
export function startWorker (name: string, options: WorkerOptions): Worker {
  const withLoader = { ...options, execArgv: [...workerExecArgv, ...(options.execArgv ?? [])] }
  if (!sourceMode) return new Worker(workerFile(name), withLoader)
  const url = JSON.stringify(pathToFileURL(workerFile(name)).href)
  const tsxApi = JSON.stringify(pathToFileURL(createRequire(import.meta.url).resolve('tsx/esm/api').replace(/\.cjs$/, '.mjs')).href)
  return new Worker(`import(${tsxApi}).then((tsx) => { tsx.register(); return import(${url}) })`, { ...withLoader, eval: true })
}
