/**
 * The services `razao serve` starts, by name. A module of its own so that the command line
 * (its help, its usage errors) can name them without loading the services (server/serve.ts).
 */
export const SERVICES = ['import', 'sign', 'extract', 'gateway', 'agent'] as const
export type ServiceName = typeof SERVICES[number]
