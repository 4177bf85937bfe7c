/** Builds the binaries once before the suite: end-to-end tests run dist/, as users do. */
import { execFileSync } from "node:child_process"

export default function setup(): void {
  execFileSync(process.execPath, ["scripts/build.mjs"], { stdio: "inherit" })
}
