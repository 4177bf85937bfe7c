/**
 * The stand-in proxy's check (proto shape and validate.rules) for routes that call an
 * InferencePool's endpoint picker, except for one value: the Envoy API the repository vendors
 * predates ext_proc's FULL_DUPLEX_STREAMED body mode (4), which the inference extension's picker
 * needs and current proxies accept. Nothing else is let through.
 */
import { formatProblem } from "../../../src/services/xds/conformance/reflect.js"
import { staticProblems } from "./check.js"

const FULL_DUPLEX =
  /ext_proc"\]\.overrides\.processing_mode\.(request|response)_body_mode: \(validate\.rules\)\.enum\.defined_only \(got 4,/

export const inferenceCheck = (typeUrl: string, resource: Parameters<typeof staticProblems>[1]) =>
  staticProblems(typeUrl, resource)
    .map(formatProblem)
    .filter((p) => !FULL_DUPLEX.test(p))
