/** Entry point of mesh-agent: runs its command tree. */
import { runCli } from "../shared/run.js"
import { PROGRAM, root } from "./command.js"

runCli(PROGRAM, root)
