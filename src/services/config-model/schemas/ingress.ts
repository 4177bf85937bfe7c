/**
 * The orchestrator's `networking.k8s.io/v1` Ingress and IngressClass, the fields the Ingress
 * conversion reads (src/services/ingress/). Everything else in these objects is ignored, not
 * rejected (the orchestrator has validated them).
 */
import { Schema } from "effect"
import { Enum, opt, StringList } from "./common.js"

const Backend = Schema.Struct({
  service: opt(
    Schema.Struct({
      name: Schema.String,
      port: opt(Schema.Struct({ number: opt(Schema.Number), name: opt(Schema.String) })),
    }),
  ),
  resource: opt(Schema.Unknown),
})

export const IngressSpec = Schema.Struct({
  ingressClassName: opt(Schema.String),
  defaultBackend: opt(Backend),
  tls: opt(Schema.Array(Schema.Struct({ hosts: opt(StringList), secretName: opt(Schema.String) }))),
  rules: opt(
    Schema.Array(
      Schema.Struct({
        host: opt(Schema.String),
        http: opt(
          Schema.Struct({
            paths: Schema.Array(
              Schema.Struct({
                path: opt(Schema.String),
                pathType: opt(Enum("Exact", "Prefix", "ImplementationSpecific")),
                backend: Backend,
              }),
            ),
          }),
        ),
      }),
    ),
  ),
})
export type IngressSpecBody = typeof IngressSpec.Type

export const IngressClassSpec = Schema.Struct({
  controller: opt(Schema.String),
})
export type IngressClassSpecBody = typeof IngressClassSpec.Type
