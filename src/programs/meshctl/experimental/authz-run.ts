import { Data, Effect, Either } from "effect"
import { authzRowsOfListeners, authzTable } from "../../../services/proxy-config/authz.js"
import { listenersOf, parseConfigDump } from "../../../services/proxy-config/dump.js"
import { MAX_CONFIG_DUMP_BYTES, readInputFile } from "../input-files.js"
import type { AuthzCheckArgs } from "./authz-options.js"

/** The failure of `meshctl x authz check`. */
export class AuthzCheckFailed extends Data.TaggedError("AuthzCheckFailed")<{ readonly message: string }> {}

const fail = (message: string) => new AuthzCheckFailed({ message })

const readDumpText = (args: AuthzCheckArgs) => {
  if (args.file !== "")
    return readInputFile(args.file, MAX_CONFIG_DUMP_BYTES).pipe(
      Effect.mapError((e) => fail(`cannot read --file ${e.message}`)),
    )
  if (args.pod === "")
    return Effect.fail(fail("expecting a pod ([<type>/]<name>[.<namespace>]) or --file with a config dump"))
  return Effect.flatMap(
    Effect.promise(() => import("../diagnostics/proxy-config-live.js")),
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
