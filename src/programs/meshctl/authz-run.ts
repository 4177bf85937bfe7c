/**
 * The work of `meshctl x authz check`: the config dump from `--file`, else from the pod's proxy
 * (proxy-config-live.ts, loaded only then), and the table of the RBAC policies its listeners
 * hold (services/proxy-config/authz.ts). Without any RBAC filter only the header is printed, as
 * the reference does.
 */
import { FileSystem } from "@effect/platform"
import { Data, Effect, Either } from "effect"
import { authzRowsOfListeners, authzTable } from "../../services/proxy-config/authz.js"
import { listenersOf, parseConfigDump } from "../../services/proxy-config/dump.js"
import type { AuthzCheckArgs } from "./authz-command.js"

/** The failure of `meshctl x authz check`. */
export class AuthzCheckFailed extends Data.TaggedError("AuthzCheckFailed")<{ readonly message: string }> {}

const fail = (message: string) => new AuthzCheckFailed({ message })

const readDumpText = (args: AuthzCheckArgs) => {
  if (args.file !== "")
    return Effect.flatMap(FileSystem.FileSystem, (fs) =>
      fs.readFileString(args.file).pipe(Effect.mapError((e) => fail(`cannot read --file ${args.file}: ${e.message}`))),
    )
  if (args.pod === "")
    return Effect.fail(fail("expecting a pod ([<type>/]<name>[.<namespace>]) or --file with a config dump"))
  return Effect.flatMap(
    Effect.promise(() => import("./proxy-config-live.js")),
    ({ fetchFromProxy }) =>
      fetchFromProxy(args.global, args.pod, args.proxyAdminPort, "GET", "/config_dump").pipe(
        Effect.mapError((e) => fail(e.message)),
      ),
  )
}

export const runAuthzCheck = (args: AuthzCheckArgs) =>
  Effect.gen(function* () {
    const text = yield* readDumpText(args)
    const from = args.file !== "" ? args.file : `config dump of ${args.pod}`
    const dump = yield* Either.match(parseConfigDump(text), {
      onLeft: (reason) => Effect.fail(fail(`${from}: ${reason}`)),
      onRight: Effect.succeed,
    })
    const table = authzTable(authzRowsOfListeners(listenersOf(dump)))
    yield* Effect.sync(() => process.stdout.write(table))
  })
