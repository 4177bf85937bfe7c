/** Builds an InjectionInput from a golden case document (YAML), with the defaults most cases share. */
import { Either } from "effect"
import { defaultInjectionConfig, parseInjectionConfig } from "../../../src/services/injection/config.js"
import type { InjectionInput, Json } from "../../../src/services/injection/contract.js"
import { defaultInjectionValues, parseInjectionValues } from "../../../src/services/injection/values.js"
import { applyMeshConfig, defaultMeshConfig } from "../../../src/services/mesh-config/index.js"

export interface CaseDocument {
  readonly description?: string
  readonly namespace?: { readonly name: string; readonly labels?: Record<string, string> }
  readonly revision?: string
  readonly mode?: "webhook" | "orch-inject"
  readonly nativeSidecars?: boolean
  /** The injector's COMPLIANCE_POLICY. */
  readonly compliancePolicy?: string
  readonly owner?: { readonly kind: string; readonly name: string }
  /** The injector ConfigMap's `config` key text. */
  readonly config?: string
  /** The injector ConfigMap's `values` key text. */
  readonly values?: string
  /** A mesh config text applied over the defaults. */
  readonly mesh?: string
  readonly pod: Json
}

const orThrow = <A>(result: Either.Either<A, string>): A =>
  Either.getOrElse(result, (error) => {
    throw new Error(error)
  })

export const inputOf = (doc: CaseDocument): InjectionInput => {
  const mesh =
    doc.mesh === undefined
      ? defaultMeshConfig()
      : Either.getOrElse(applyMeshConfig("mesh", doc.mesh), (issues) => {
          throw new Error(issues.map((i) => i.message).join("; "))
        }).value
  return {
    pod: doc.pod,
    namespace: {
      name: doc.namespace?.name ?? "default",
      labels: doc.namespace?.labels ?? { "mesh-injection": "enabled" },
    },
    config: doc.config === undefined ? defaultInjectionConfig : orThrow(parseInjectionConfig(doc.config)),
    values: doc.values === undefined ? defaultInjectionValues : orThrow(parseInjectionValues(doc.values)),
    meshConfig: JSON.parse(JSON.stringify(mesh)) as Json,
    revision: doc.revision ?? "",
    ...(doc.nativeSidecars === undefined ? {} : { nativeSidecars: doc.nativeSidecars }),
    ...(doc.compliancePolicy === undefined ? {} : { compliancePolicy: doc.compliancePolicy }),
    ...(doc.owner === undefined ? {} : { owner: doc.owner }),
    ...(doc.mode === undefined ? {} : { mode: doc.mode }),
  }
}
