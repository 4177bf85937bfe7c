/** The shape of an analyzer: a named pure function of a snapshot and the message types it may emit. */
import type { MessageType } from "./message-types.js"
import type { Message, Snapshot } from "./snapshot.js"

export interface Analyzer {
  /** `<family>.<Name>`, what `--analyzer` selects and `-L` lists (the reference's names). */
  readonly name: string
  readonly description: string
  readonly types: ReadonlyArray<MessageType>
  readonly run: (snapshot: Snapshot) => ReadonlyArray<Message>
  /**
   * The finer analyzers this one is made of, one per rule, each runnable alone (tests pin each
   * rule through them); `--analyzer` selects only the whole, as the reference's names do.
   */
  readonly parts?: ReadonlyArray<Analyzer>
}

/** One analyzer under the reference's name running several of ours: their messages together. */
export const combine = (name: string, description: string, parts: ReadonlyArray<Analyzer>): Analyzer => ({
  name,
  description,
  types: [...new Set(parts.flatMap((p) => p.types))],
  run: (snapshot) => parts.flatMap((p) => p.run(snapshot)),
  parts,
})

/** The analyzer named, or a part of one (depth first); undefined when none is. */
export const findAnalyzer = (analyzers: ReadonlyArray<Analyzer>, name: string): Analyzer | undefined => {
  for (const a of analyzers) {
    if (a.name === name) return a
    const inner = a.parts === undefined ? undefined : findAnalyzer(a.parts, name)
    if (inner !== undefined) return inner
  }
  return undefined
}
