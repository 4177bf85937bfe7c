/**
 * Variables that say how text may be styled on the terminal: read by every binary's help page
 * and by meshctl's coloured output. The spec documents none of them (beyond spec); they follow
 * the common conventions (no-color.org, `TERM=dumb`).
 */
import { type EnvTable, env } from "./env.js"

export const terminalEnv = {
  NO_COLOR: env.string(
    "",
    "Beyond spec: any non-empty value turns off coloured and bold output (help pages, meshctl analyze)",
  ),
  TERM: env.string("", "Beyond spec: the terminal type; dumb turns off meshctl analyze's colours"),
} as const satisfies EnvTable

/** Whether coloured output is allowed, given the variables and whether the output is a terminal. */
export const colorAllowed = (values: { readonly NO_COLOR: string; readonly TERM: string }, tty: boolean): boolean =>
  tty && values.NO_COLOR === "" && values.TERM !== "dumb"
