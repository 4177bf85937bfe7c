/**
 * A stand-in router for the InferencePool e2e tests: Gateway `edge` of namespace `demo`, HTTP on
 * 8080, and how a request on it is routed. Its check is the stand-in's (proto shape and
 * validate.rules) except for one value: the Envoy API the repository vendors predates ext_proc's
 * FULL_DUPLEX_STREAMED body mode (4), which the inference extension's picker needs and current
 * proxies accept. Nothing else is let through.
 */
import { formatProblem } from "../../../src/services/xds/conformance/reflect.js"
import { staticProblems } from "./check.js"
import { outboundHttp } from "./evaluator.js"
import { type StandInProxy, StandInType, startStandInProxy } from "./stand-in-proxy.js"

const FULL_DUPLEX =
  /ext_proc"\]\.overrides\.processing_mode\.(request|response)_body_mode: \(validate\.rules\)\.enum\.defined_only \(got 4,/

const inferenceCheck = (typeUrl: string, resource: Parameters<typeof staticProblems>[1]) =>
  staticProblems(typeUrl, resource)
    .map(formatProblem)
    .filter((p) => !FULL_DUPLEX.test(p))

/** The router connected to the ADS server at `address`, and where it sends a request for `path`. */
export const startInferenceRouter = (
  address: string,
): { readonly proxy: StandInProxy; readonly request: (path: string) => ReturnType<typeof outboundHttp> } => {
  const proxy = startStandInProxy({
    address,
    check: inferenceCheck,
    node: {
      id: "router~10.9.9.8~edge-1.demo~demo.svc.cluster.local",
      metadata: { NAMESPACE: "demo", LABELS: { "gateway.networking.k8s.io/gateway-name": "edge" } },
    },
  })
  const request = (path: string) =>
    outboundHttp({
      listeners: proxy.resources(StandInType.listener),
      routes: proxy.resources(StandInType.route),
      port: 8080,
      host: "anything.example.com",
      path,
      headers: {},
    })
  return { proxy, request }
}
