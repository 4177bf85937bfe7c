/**
 * ServiceEntries that give one host and port different protocols where both are visible
 * (MSH0177). Hosts are compared as written; visibility is by exportTo: entries exported to the
 * same namespace meet, and entries exported to all meet every scope. Each ServiceEntry is
 * reported once, naming every entry of the conflict and the protocols (upper-cased) involved.
 */
import type { Analyzer } from "../analyzer.js"
import { ALL_NAMESPACES, exportScopes } from "../exported-hosts.js"
import { MessageTypes } from "../message-types.js"
import { arr, type Entry, type Message, message, num, rec, type Snapshot, str, strs } from "../snapshot.js"

interface Claim {
  readonly protocol: string
  readonly entry: Entry
}

const conflictingProtocols = (snapshot: Snapshot): ReadonlyArray<Message> => {
  const byKey = new Map<string, { scope: string; host: string; port: number; claims: Array<Claim> }>()
  for (const se of snapshot.ofKind("ServiceEntry")) {
    for (const scope of exportScopes(strs(se.body.exportTo), se.namespace))
      for (const host of strs(se.body.hosts))
        for (const p of arr(se.body.ports)) {
          const port = num(rec(p).number) ?? 0
          const key = `${scope}\u0000${host}\u0000${port}`
          const claim = { protocol: str(rec(p).protocol).toUpperCase(), entry: se }
          const slot = byKey.get(key)
          if (slot === undefined) byKey.set(key, { scope, host, port, claims: [claim] })
          else slot.claims.push(claim)
        }
  }
  const reported = new Set<Entry>()
  const out: Array<Message> = []
  for (const { scope, host, port, claims } of byKey.values()) {
    const all =
      scope === ALL_NAMESPACES
        ? claims
        : [...claims, ...(byKey.get(`${ALL_NAMESPACES}\u0000${host}\u0000${port}`)?.claims ?? [])]
    const protocols = [...new Set(all.map((c) => c.protocol))].sort()
    if (protocols.length < 2) continue
    const names = [...new Set(all.map((c) => `${c.entry.namespace}/${c.entry.name}`))].sort().join(", ")
    for (const { entry } of all) {
      if (reported.has(entry)) continue
      reported.add(entry)
      out.push(
        message(
          MessageTypes.ConflictingServiceEntryProtocol,
          entry,
          `Multiple ServiceEntries (${names}) define the same host ${JSON.stringify(host)} and port ${port} with conflicting protocols (${protocols.join(", ")}).`,
          ["metadata", "name"],
        ),
      )
    }
  }
  return out
}

export const serviceEntryProtocolAnalyzers: ReadonlyArray<Analyzer> = [
  {
    name: "serviceentry.ConflictingServiceEntryProtocolAnalyzer",
    description: "Checks if multiple ServiceEntries define the same host and port with different protocols",
    types: [MessageTypes.ConflictingServiceEntryProtocol],
    run: conflictingProtocols,
  },
]
