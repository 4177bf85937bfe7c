/** Entry point of meshctl: runs its command tree. */
import { runCli } from "../shared/run.js"
import { PROGRAM, root } from "./command.js"
import { meshctlTreeNotes } from "./tree-notes.js"

runCli(PROGRAM, root, meshctlTreeNotes)
