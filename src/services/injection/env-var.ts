/** One entry of a container's `env`: a literal value, or one taken from elsewhere (`valueFrom`). */
import type { Obj } from "../orchestrator/json.js"

export type EnvVar =
  | { readonly name: string; readonly value: string }
  | { readonly name: string; readonly valueFrom: Obj }
