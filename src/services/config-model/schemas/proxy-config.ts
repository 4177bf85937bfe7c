/** networking.mesh.io ProxyConfig: per-workload proxy settings. */
import { Schema } from "effect"
import { checked, int32Within, opt, StringMap, WorkloadSelector } from "./common.js"

export const ProxyConfig = Schema.Struct({
  selector: opt(WorkloadSelector),
  concurrency: opt(int32Within({ minimum: 0 })),
  environmentVariables: opt(StringMap),
  // A free string in the reference: it names an image variant (`default`, `debug`, `distroless`, ...).
  image: opt(Schema.Struct({ imageType: opt(Schema.String) })),
}).pipe(
  checked((pc, report) => {
    if (pc.concurrency !== undefined && pc.concurrency < 0) {
      report(["concurrency"], "concurrency must be greater than or equal to 0")
    }
  }),
)
export type ProxyConfigSpec = typeof ProxyConfig.Type
