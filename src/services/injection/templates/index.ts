/** The built-in templates by name (`inject.mesh.io/templates`, the config's defaultTemplates). */
import type { Template } from "../fragment.js"
import { TemplateNames } from "../names.js"
import { captureTemplate } from "./capture.js"
import { gatewayTemplate } from "./gateway.js"
import { grpcAgentTemplate, grpcSimpleTemplate } from "./grpc.js"
import { sidecarTemplate } from "./sidecar.js"

export const builtinTemplates: Readonly<Record<string, Template>> = {
  [TemplateNames.sidecar]: sidecarTemplate,
  [TemplateNames.init]: captureTemplate,
  [TemplateNames.gateway]: gatewayTemplate,
  [TemplateNames.grpcAgent]: grpcAgentTemplate,
  [TemplateNames.grpcSimple]: grpcSimpleTemplate,
}
