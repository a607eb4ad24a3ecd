/** The slice of a pino logger the agent's core uses (core has no logging library of its own). */
export interface AgentLogger {
  info: (obj: object, msg: string) => void
  warn: (obj: object, msg: string) => void
  error: (obj: object, msg: string) => void
}
