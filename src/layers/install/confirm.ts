/**
 * Asks a yes/no question on stdout and reads one line of stdin. A closed or empty stdin is a
 * no: nothing proceeds unless someone (or `--skip-confirmation`) says yes.
 */
import { createInterface } from "node:readline"
import { Effect } from "effect"
import { isYes } from "../../services/install/install-text.js"

export const confirm = (question: string): Effect.Effect<boolean> =>
  Effect.async<boolean>((resume) => {
    process.stdout.write(question)
    const lines = createInterface({ input: process.stdin })
    let answered = false
    const finish = (answer: string | undefined) => {
      if (answered) return
      answered = true
      lines.close()
      // The question ends without a newline; end the line before what follows.
      if (answer === undefined) process.stdout.write("\n")
      resume(Effect.succeed(isYes(answer)))
    }
    lines.once("line", finish)
    lines.once("close", () => finish(undefined))
    return Effect.sync(() => lines.close())
  })
