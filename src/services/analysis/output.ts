/**
 * Rendering of messages: `log` (one line each, as the reference prints them, colored by level
 * on a terminal), `json` and `yaml` (the reference's message objects: code, level, origin,
 * reference, documentationUrl).
 */
import { dump } from "js-yaml"
import { fieldLine, renderFieldPath } from "./field-lines.js"
import { documentationUrl, type Level } from "./message-types.js"
import type { Message } from "./snapshot.js"

/** `file:line` of a message: the field's line when it can be found, else the document's. */
export const messageOrigin = (message: Message): string | undefined => {
  const origin = message.resource?.origin
  if (origin === undefined || origin.file === "") return undefined
  if (origin.line === undefined) return `${origin.file} document ${origin.documentIndex}`
  const within =
    message.path !== undefined && origin.text !== undefined && origin.textLine !== undefined
      ? fieldLine(origin.text, message.path)
      : undefined
  return `${origin.file}:${within === undefined || origin.textLine === undefined ? origin.line : origin.textLine + within - 1}`
}

/** `Namespace default`, `VirtualService default/reviews file.yaml:12`. */
const reference = (message: Message): string => {
  const r = message.resource
  if (r === undefined) return ""
  const name = r.namespace === "" ? `${r.kind} ${r.name}` : `${r.kind} ${r.namespace}/${r.name}`
  const where = messageOrigin(message)
  return where === undefined ? name : `${name} ${where}`
}

const COLORS: Readonly<Record<Level, string>> = { Error: "\u001b[1;31m", Warning: "\u001b[33m", Info: "\u001b[36m" }
const RESET = "\u001b[0m"

/** A multi-cluster analysis names the cluster of each resource, as the reference's `[cluster-<id>]`. */
const clusterOf = (message: Message): string | undefined => {
  const cluster = message.resource?.cluster
  return cluster === undefined || cluster === "" ? undefined : cluster
}

export const formatLog = (message: Message, color: boolean): string => {
  const level = color ? `${COLORS[message.level]}${message.level}${RESET}` : message.level
  const ref = reference(message)
  const cluster = clusterOf(message)
  return `${level} [${message.type.code}]${cluster === undefined ? "" : ` [cluster-${cluster}]`}${ref === "" ? "" : ` (${ref})`} ${message.text}`
}

/** The reference's JSON/YAML message object. */
export const messageObject = (message: Message) => {
  const where = messageOrigin(message)
  return {
    code: message.type.code,
    documentationUrl: documentationUrl(message.type.code),
    level: message.level,
    message: message.text,
    name: message.type.name,
    ...(message.resource !== undefined
      ? {
          origin: `${message.resource.kind} ${message.resource.namespace === "" ? "" : `${message.resource.namespace}/`}${message.resource.name}`,
        }
      : {}),
    ...(where !== undefined ? { reference: where } : {}),
    ...(message.path !== undefined ? { path: renderFieldPath(message.path) } : {}),
    ...(clusterOf(message) !== undefined ? { cluster: clusterOf(message) } : {}),
  }
}

export const formatJson = (messages: ReadonlyArray<Message>): string =>
  `${JSON.stringify(messages.map(messageObject), null, "\t")}\n`

export const formatYaml = (messages: ReadonlyArray<Message>): string =>
  messages.length === 0 ? "[]\n" : dump(messages.map(messageObject), { lineWidth: -1, noRefs: true })
