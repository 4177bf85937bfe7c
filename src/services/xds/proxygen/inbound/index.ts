/**
 * The sidecar's inbound side: the `virtualInbound` listener (15006) and the inbound clusters.
 */
export { generateInboundClusters, INBOUND_BIND_ADDRESS } from "./clusters.js"
export { generateInboundListener, inboundChainName, inboundListenerConflicts } from "./listener.js"
export { type InboundPort, type InboundPorts, inboundPorts, type ProtocolClass, protocolClass } from "./ports.js"
