/**
 * The CA's pages of the discovery server's debug interface (issue 43): `ca_rotation`, where a
 * root key rotation stands (phase, roots, the bundle's version and which agents have not
 * acknowledged it), and `ca_rotate_key`, which starts one (self-signed CA). They are served
 * where every debug page is — loopback HTTP callers, and xDS debug requests of system-namespace
 * identities — and `ca_rotate_key` only to POST over HTTP (debug-server.ts).
 */
import { Effect, Option } from "effect"
import { CertificateAuthority } from "../../services/ca/ca.js"
import type { DebugPage } from "../../services/xds/protocol/debug-type.js"

/** Paths that change something: HTTP serves them to POST only. */
export const CA_DEBUG_MUTATIONS: ReadonlySet<string> = new Set(["ca_rotate_key"])

const json = (body: unknown): DebugPage => ({ status: 200, body: `${JSON.stringify(body, null, 2)}\n` })
const text = (status: number, message: string): DebugPage => ({ status, body: `${message}\n` })

/** Not a CA page. */
const notOurs: Effect.Effect<DebugPage | undefined> = Effect.sync(() => undefined)

/** The page at `path`, or undefined when it is not a CA page. */
export const caDebugPage = (path: string): Effect.Effect<DebugPage | undefined> => {
  if (path !== "ca_rotation" && path !== "ca_rotate_key") return notOurs
  return Effect.flatMap(Effect.serviceOption(CertificateAuthority), (ca) => {
    const rotation = Option.isSome(ca) ? ca.value.keyRotation : undefined
    if (rotation === undefined) return Effect.succeed(text(404, "this server runs no certificate authority"))
    if (path === "ca_rotation") return Effect.map(rotation.status, json)
    return rotation.rotate.pipe(
      Effect.map(json),
      Effect.catchAll((e) => Effect.succeed(text(409, e.reason))),
    )
  })
}
