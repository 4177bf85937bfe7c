/** The shape of an analyzer: a named pure function of a snapshot and the message types it may emit. */
import type { MessageType } from "./message-types.js"
import type { Message, Snapshot } from "./snapshot.js"

export interface Analyzer {
  /** `<family>.<Name>`, what `--analyzer` selects and `-L` lists. */
  readonly name: string
  readonly description: string
  readonly types: ReadonlyArray<MessageType>
  readonly run: (snapshot: Snapshot) => ReadonlyArray<Message>
}
