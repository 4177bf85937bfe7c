/**
 * Where the agent's xDS proxy delivers the name table (NDS) it receives from the discovery server:
 * the DNS proxy answers from the latest table. The xDS proxy subscribes to NDS itself, on each
 * upstream stream, only when a sink is present (DNS capture on) and keeps NDS responses from the
 * downstream proxy, which never asked for them.
 */
import { Context, type Effect } from "effect"
import type { NameTable } from "../../xds/proxygen/nds/name-table.js"

export interface NameTableSinkShape {
  /** Replace the table the DNS proxy answers from (each NDS response holds the whole table). */
  readonly update: (table: NameTable) => Effect.Effect<void>
}

export class NameTableSink extends Context.Tag("mesh/agent/NameTableSink")<NameTableSink, NameTableSinkShape>() {}
