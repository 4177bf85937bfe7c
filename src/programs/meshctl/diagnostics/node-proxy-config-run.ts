/**
 * The work of `meshctl node-proxy-config`: read the node proxy's dump (a `--file`, or a running
 * node proxy through node-proxy-config-live.ts, loaded only then), then print the reference's
 * short tables or the selected JSON (indented four spaces) / YAML.
 */
import { Data, Effect, Either } from "effect"
import { stringify } from "yaml"
import { type NodeProxyDump, parseNodeProxyDump } from "../../../services/proxy-config/node-proxy-dump.js"
import {
  certificateTable,
  connectionsTable,
  filteredWorkloadStates,
  fullSummary,
} from "../../../services/proxy-config/node-proxy-tables.js"
import { MAX_CONFIG_DUMP_BYTES, readInputFile } from "../input-files.js"
import type { NodeProxyConfigRequest, NodeProxyFlags } from "./node-proxy-config-options.js"

/** The failure of `meshctl node-proxy-config`. */
export class NodeProxyConfigFailed extends Data.TaggedError("NodeProxyConfigFailed")<{ readonly message: string }> {}

const fail = (message: string) => new NodeProxyConfigFailed({ message })

const parse = (text: string, from: string) =>
  Either.match(parseNodeProxyDump(text), {
    onLeft: (reason) => Effect.fail(fail(`${from}: ${reason}`)),
    onRight: Effect.succeed,
  })

interface Loaded {
  readonly dump: NodeProxyDump
  readonly workload?: { readonly name: string; readonly namespace: string }
}

/** The dump from `--file`, else from the node proxy the pod argument or `--node` names. */
const load = (flags: NodeProxyFlags<"all">, pod: string, single: boolean) =>
  Effect.gen(function* () {
    // As the reference: the file, a pod and --node each choose the source; only one may.
    const chosen = [flags.file !== "" && "--file", pod !== "" && "a pod", flags.node !== "" && "--node"].filter(Boolean)
    if (chosen.length > 1)
      return yield* fail(`at most one of --file, --node, or pod name must be passed (got ${chosen.join(" and ")})`)
    if (flags.file !== "") {
      const text = yield* readInputFile(flags.file, MAX_CONFIG_DUMP_BYTES).pipe(
        Effect.mapError((e) => fail(`cannot read --file ${e.message}`)),
      )
      return { dump: yield* parse(text, flags.file) } satisfies Loaded
    }
    const { fetchNodeProxyDump } = yield* Effect.promise(() => import("./node-proxy-config-live.js"))
    const target = yield* fetchNodeProxyDump({ ...flags, pod, single }).pipe(Effect.mapError((e) => fail(e.message)))
    const dump = yield* parse(target.dump, `config dump of node proxy ${target.proxy}`)
    return { dump, ...(target.workload === undefined ? {} : { workload: target.workload }) } satisfies Loaded
  })

const structured = (value: unknown, output: "json" | "yaml"): string =>
  output === "json" ? `${JSON.stringify(value, null, 4)}\n` : stringify(value)

const print = (text: string) => Effect.sync(() => process.stdout.write(text))

export const runNodeProxyConfig = (request: NodeProxyConfigRequest) =>
  Effect.gen(function* () {
    const f = request.flags
    switch (request.kind) {
      case "all": {
        const { dump } = yield* load(f, request.pod, false)
        return yield* print(f.output === "short" ? fullSummary(dump, { node: f.node }) : structured(dump.raw, f.output))
      }
      case "certificate": {
        const { dump } = yield* load(f, request.pod, false)
        return yield* print(f.output === "short" ? certificateTable(dump) : structured(dump.certificates, f.output))
      }
      case "connections": {
        const c = request.flags
        if (!["", "inbound", "outbound"].includes(c.direction)) {
          return yield* fail(`--direction must be inbound or outbound, not "${c.direction}"`)
        }
        const { dump, workload } = yield* load(c, request.pod, true)
        const filter = {
          namespace: workload?.namespace ?? c.workloadNamespace,
          direction: c.direction,
          raw: c.raw,
          workload: workload?.name ?? "",
        }
        return yield* print(
          c.output === "short"
            ? connectionsTable(dump, filter)
            : structured(filteredWorkloadStates(dump, filter), c.output),
        )
      }
    }
  })
