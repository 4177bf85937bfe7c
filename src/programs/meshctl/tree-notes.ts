/**
 * What meshctl's help says beyond the @effect/cli tree (spec part 3 §4.1–4.3): each command's
 * aliases, which @effect/cli lacks (every alias is a sibling command built by the same factory,
 * folded into its command here so help lists it once, `proxy-status, ps`), and the flags a group
 * gives every command below it — the global flags at the root, `admin --selector`, ...
 * Paths are canonical command names below `meshctl`.
 */
import type { TreeNotes } from "../../services/cli/command-model.js"

/** The global flags (spec part 3 §4.1), accepted by every command and shown in the root's help. */
export const GLOBAL_FLAGS = [
  "--as",
  "--as-group",
  "--as-uid",
  "--context",
  "--meshNamespace",
  "--orchclient-timeout",
  "--orchconfig",
  "--namespace",
  "--vklog",
] as const

export const meshctlTreeNotes: TreeNotes = {
  aliases: {
    admin: ["meshd"],
    "admin log": ["l"],
    dashboard: ["dash", "d"],
    experimental: ["x"],
    "experimental metrics": ["m"],
    "experimental proxy-stats": ["es"],
    "experimental proxy-status": ["ps"],
    install: ["apply"],
    "manifest install": ["apply"],
    "node-proxy-config certificate": ["certificates", "certs", "cert"],
    "node-proxy-config connections": ["cons"],
    "proxy-config": ["pc"],
    "proxy-config all": ["a"],
    "proxy-config bootstrap": ["b"],
    "proxy-config cluster": ["clusters", "c"],
    "proxy-config endpoint": ["endpoints", "ep"],
    "proxy-config listener": ["listeners", "l"],
    "proxy-config log": ["o"],
    "proxy-config rootca-compare": ["rc"],
    "proxy-config route": ["routes", "r"],
    "proxy-config secret": ["secrets", "s"],
    "proxy-status": ["ps"],
    "tag list": ["show"],
    "tag remove": ["delete"],
    validate: ["v"],
  },
  groupFlags: {
    "": GLOBAL_FLAGS,
    admin: ["--selector"],
    manifest: ["--dry-run"],
    "node-proxy-config": ["--file", "--node", "--output", "--proxy-admin-port"],
    "proxy-config": ["--output", "--proxy-admin-port"],
    waypoint: ["--name"],
  },
}
