/**
 * `npx mesh-discovery ...` from the checkout installs the checkout into npm's npx cache, which
 * runs its `prepare` script with npm_command=exec. That must not rebuild dist/ (a server may be
 * running from it); scripts/prepare.mjs skips the build then. A fresh npm cache makes npx
 * install (and so run prepare) again; foreground scripts make its output visible.
 */
import { execFile } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { expect, it } from "vitest"
import { ROOT } from "../support/processes.js"

it("npx mesh-discovery runs the built binary without rebuilding dist/", async () => {
  const cache = mkdtempSync(join(tmpdir(), "npx-cache-"))
  try {
    const result = await new Promise<{ code: number; output: string }>((resolve) =>
      execFile(
        "npx",
        ["mesh-discovery", "version"],
        {
          cwd: ROOT,
          env: { ...process.env, npm_config_cache: cache, npm_config_foreground_scripts: "true", NO_COLOR: "1" },
          timeout: 120_000,
        },
        (error, stdout, stderr) =>
          resolve({
            code: error === null ? 0 : typeof error.code === "number" ? error.code : 1,
            output: stdout + stderr,
          }),
      ),
    )
    expect(result.code, result.output).toBe(0)
    expect(result.output).toContain("prepare: dist/ is already built; not rebuilding for npx")
    expect(result.output).toMatch(/^\d+\.\d+\.\d+$/m)
  } finally {
    rmSync(cache, { recursive: true, force: true })
  }
}, 150_000)
