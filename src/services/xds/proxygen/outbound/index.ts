/** A sidecar's outbound side: listeners (LDS) and route configurations (RDS). */
export {
  buildOutboundListener,
  buildVirtualOutbound,
  generateOutboundListeners,
  outboundListenerConflicts,
} from "./listeners.js"
export type { OutboundConflicts } from "./plan.js"
export { generateOutboundRoutes } from "./routes.js"
