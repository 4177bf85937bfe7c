/** networking.mesh.io ProxyConfig: per-workload proxy settings. */
import { Schema } from "effect"
import { checked, Enum, Int32, opt, StringMap, WorkloadSelector } from "./common.js"

export const ProxyConfig = Schema.Struct({
  selector: opt(WorkloadSelector),
  concurrency: opt(Int32),
  environmentVariables: opt(StringMap),
  image: opt(Schema.Struct({ imageType: opt(Enum("default", "debug", "distroless")) })),
}).pipe(
  checked((pc, report) => {
    if (pc.concurrency !== undefined && pc.concurrency < 0) {
      report(["concurrency"], "concurrency must be greater than or equal to 0")
    }
  }),
)
export type ProxyConfigSpec = typeof ProxyConfig.Type
