/**
 * jose, loaded on first use: mesh-discovery builds the JWT authenticator and the JWKS resolvers
 * at start but verifies tokens only when a CA request comes, and loading jose costs about 50 ms
 * of CPU on the way to `/ready`. Through `require` (Node.js loads ES modules that way): the
 * bundles run in a vm.Script, which has no dynamic import.
 */
import { createRequire } from "node:module"
import type * as Jose from "jose"

export type { Jose }

const requireHere = createRequire(import.meta.url)

/** The jose module (loaded by the first call; Node.js keeps it). */
export const jose = (): typeof Jose => requireHere("jose") as typeof Jose
