/**
 * The reference injector's own template functions (its InjectionFuncmap), with its meanings:
 * `annotation isset valueOrDefault toJSON fromJSON structToJSON protoToJSON toYaml indent
 * directory contains toLower appendMultusNetwork env omit strdict toJsonMap mergeMaps omitNil
 * excludeInboundPort includeInboundPorts applicationPorts kubevirtInterfaces excludeInterfaces
 * formatDuration otelResourceAttributes`. Note the reference's `indent` leaves the first line
 * alone (sprig's `nindent` pads every line after a newline) and its `contains` takes the needle
 * first. `env` reads the table it is given (the injector's settings), never the process.
 */
import { stringify } from "yaml"
import { appendMultusNetwork } from "../multus.js"
import { otelResourceAttributes } from "../otel-resource-attributes.js"
import { arity, fixed } from "./builtins.js"
import type { FunctionContext, TemplateFunction } from "./exec.js"
import { formatValue, isMap, toInt, toStr, type Value } from "./go-values.js"
import { goJson } from "./sprig.js"

export interface InjectionFunctionInputs {
  /** What `env KEY default` reads; absent keys (and empty values) give the default. */
  readonly env: Readonly<Record<string, string>>
  /** `protoToJSON` of a value the caller knows (the proxy config: only what differs from defaults). */
  readonly protoJson: (value: Value) => string | undefined
  /** The injected proxy container's name (`applicationPorts` leaves it out). */
  readonly proxyContainerName: string
}

const stringMap = (v: Value): Readonly<Record<string, string>> => {
  if (!isMap(v)) return {}
  const out: Record<string, string> = {}
  for (const [k, value] of Object.entries(v)) out[k] = toStr(value)
  return out
}

const containerPorts = (containers: Value, include: (c: Record<string, unknown>) => boolean): string =>
  (Array.isArray(containers) ? containers : [])
    .filter(isMap)
    .filter(include)
    .flatMap((c) => (Array.isArray(c.ports) ? c.ports : []))
    .filter(isMap)
    .filter((p) => p.protocol !== "UDP" && p.protocol !== "SCTP")
    .map((p) => toStr(p.containerPort))
    .join(",")

/** Removes nils from maps and lists, dropping a map or list left empty by it (the reference's omitNil). */
export const omitNil = (v: Value): Value => {
  if (v === undefined || v === null) return undefined
  if (Array.isArray(v)) {
    if (!v.some((e) => e === null || e === undefined || hasNil(e))) return v
    const out = v.map(omitNil).filter((e) => e !== undefined)
    return out.length === 0 ? undefined : out
  }
  if (isMap(v)) {
    if (!Object.values(v).some((e) => e === null || e === undefined || hasNil(e))) return v
    const out: Record<string, unknown> = {}
    for (const [k, e] of Object.entries(v)) {
      const kept = omitNil(e)
      if (kept !== undefined) out[k] = kept
    }
    return Object.keys(out).length === 0 ? undefined : out
  }
  return v
}

const hasNil = (v: Value): boolean =>
  Array.isArray(v)
    ? v.some((e) => e === null || e === undefined || hasNil(e))
    : isMap(v)
      ? Object.values(v).some((e) => e === null || e === undefined || hasNil(e))
      : false

/** YAML as sigs.k8s.io/yaml writes it: keys sorted, block style, a final newline. */
export const toYaml = (v: Value): string =>
  v === undefined || v === null
    ? "null\n"
    : stringify(v, { sortMapEntries: true, lineWidth: 0, aliasDuplicateObjects: false })

/** The reference's indent: every line but the first gets `spaces` spaces. */
const indentRest = (spaces: number, source: string, ctx: FunctionContext): string => {
  const lines = source.split("\n")
  ctx.checkSize(source.length + Math.max(0, spaces) * lines.length, "indented text")
  const pad = " ".repeat(Math.max(0, spaces))
  return lines.map((line, i) => (i === 0 ? line : pad + line)).join("\n")
}

/** A duration as Go prints one (`1h0m0s`, `5s`, `1.5s`); strings (our configs hold them) unchanged. */
const formatDuration = (v: Value): string => {
  if (typeof v === "string") return v
  if (!isMap(v)) return "0s"
  const total = toInt(v.seconds) * 1e9 + toInt(v.nanos)
  if (total === 0) return "0s"
  const sign = total < 0 ? "-" : ""
  let ns = Math.abs(total)
  const h = Math.floor(ns / 3.6e12)
  ns -= h * 3.6e12
  const m = Math.floor(ns / 6e10)
  ns -= m * 6e10
  const s = ns / 1e9
  if (h === 0 && m === 0 && s < 1) {
    return ns >= 1e6 ? `${sign}${ns / 1e6}ms` : ns >= 1e3 ? `${sign}${ns / 1e3}µs` : `${sign}${ns}ns`
  }
  return `${sign}${h > 0 ? `${h}h` : ""}${h > 0 || m > 0 ? `${m}m` : ""}${Number(s.toFixed(9))}s`
}

const mergeStringMaps = (maps: ReadonlyArray<Value>): Record<string, string> =>
  Object.assign({}, ...maps.map(stringMap)) as Record<string, string>

export const injectionFunctions = (inputs: InjectionFunctionInputs): Readonly<Record<string, TemplateFunction>> => ({
  annotation: (args) => {
    arity("annotation", args, 3)
    const meta = isMap(args[0]) ? args[0] : {}
    const annotations = stringMap(meta.annotations)
    const name = toStr(args[1])
    return Object.hasOwn(annotations, name) ? annotations[name] : formatValue(args[2])
  },
  isset: fixed("isset", 2, (args) => Object.hasOwn(stringMap(args[0]), toStr(args[1]))),
  valueOrDefault: fixed("valueOrDefault", 2, (args) =>
    args[0] === "" || args[0] === undefined || args[0] === null ? args[1] : args[0],
  ),
  toJSON: fixed("toJSON", 1, (args) => (isMap(args[0]) ? goJson(stringMap(args[0])) : "{}")),
  fromJSON: (args) => {
    arity("fromJSON", args, 1)
    try {
      return JSON.parse(toStr(args[0])) as Value
    } catch {
      return "{}"
    }
  },
  structToJSON: fixed("structToJSON", 1, (args) =>
    args[0] === undefined || args[0] === null ? "{}" : JSON.stringify(args[0]),
  ),
  protoToJSON: fixed(
    "protoToJSON",
    1,
    (args) => inputs.protoJson(args[0]) ?? (args[0] === undefined || args[0] === null ? "{}" : goJson(args[0])),
  ),
  toYaml: fixed("toYaml", 1, (args) => toYaml(args[0])),
  indent: fixed("indent", 2, (args, ctx) => indentRest(toInt(args[0]), toStr(args[1]), ctx)),
  directory: (args) => {
    arity("directory", args, 1)
    const p = toStr(args[0])
    return p.slice(0, p.lastIndexOf("/") + 1)
  },
  contains: fixed("contains", 2, (args) => toStr(args[1]).includes(toStr(args[0]))),
  toLower: fixed("toLower", 1, (args) => toStr(args[0]).toLowerCase()),
  appendMultusNetwork: fixed("appendMultusNetwork", 2, (args) => appendMultusNetwork(toStr(args[0]), toStr(args[1]))),
  env: (args) => {
    arity("env", args, 2)
    const value = inputs.env[toStr(args[0])] ?? ""
    return value === "" ? toStr(args[1]) : value
  },
  omit: (args) => {
    arity("omit", args, 1, Number.POSITIVE_INFINITY)
    const drop = new Set(args.slice(1).map((k) => toStr(k)))
    return Object.fromEntries(Object.entries(stringMap(args[0])).filter(([k]) => !drop.has(k)))
  },
  strdict: (args) => {
    const out: Record<string, string> = {}
    for (let i = 0; i < args.length; i += 2) out[toStr(args[i])] = i + 1 < args.length ? toStr(args[i + 1]) : ""
    return out
  },
  toJsonMap: (args) => goJson(mergeStringMaps(args)),
  mergeMaps: (args) => (args.length === 0 ? undefined : mergeStringMaps(args)),
  omitNil: fixed("omitNil", 1, (args) => omitNil(args[0])),
  excludeInboundPort: (args) => {
    arity("excludeInboundPort", args, 2)
    const port = toStr(args[0]).trim()
    const excluded = toStr(args[1])
    if (port === "" || port === "0") return excluded
    const ports = excluded.split(",")
    if (ports.includes(port)) return excluded
    return [...ports.map((p) => p.trim()).filter((p) => p !== ""), port].join(",")
  },
  includeInboundPorts: fixed("includeInboundPorts", 1, (args) => containerPorts(args[0], () => true)),
  applicationPorts: fixed("applicationPorts", 1, (args) =>
    containerPorts(args[0], (c) => c.name !== inputs.proxyContainerName),
  ),
  kubevirtInterfaces: fixed("kubevirtInterfaces", 1, (args) => toStr(args[0])),
  excludeInterfaces: fixed("excludeInterfaces", 1, (args) => toStr(args[0])),
  formatDuration: fixed("formatDuration", 1, (args) => formatDuration(args[0])),
  otelResourceAttributes: fixed("otelResourceAttributes", 5, (args) =>
    otelResourceAttributes(
      args[0],
      stringMap(args[1]),
      stringMap(args[2]),
      toStr(args[3]),
      (Array.isArray(args[4]) ? args[4] : []).filter(isMap),
    ),
  ),
})
