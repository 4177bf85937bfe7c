/**
 * SIGTERM with an ADS client connected that never reads (issue 16): the server's answer to it
 * can never be sent, so its stream cannot end gracefully. The shutdown must not wait for it
 * until the exit timer fires (and exits 1): the stream is reset, the process exits 0, quickly.
 */
import { rmSync } from "node:fs"
import { join } from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { TypeUrl } from "../../src/services/xds/protocol/type-urls.js"
import { discoveryArgs, exampleMeshDir } from "../support/discovery.js"
import { type Daemon, startDaemon } from "../support/processes.js"
import { openRawStream, rawSession } from "../support/raw-ads.js"

const SHUTDOWN_MS = 6000
const NODE = { id: "sidecar~127.0.0.1~stuck.demo~demo.svc.cluster.local", metadata: { fields: {} } }

let daemon: Daemon | undefined
let dir = ""

afterEach(async () => {
  if (daemon?.process.exitCode === null) await daemon.stop("SIGKILL")
  if (dir !== "") rmSync(dir, { recursive: true, force: true })
})

describe("mesh-discovery shutdown", () => {
  it("exits 0 well within --shutdownDuration with a client that never reads and has a response outstanding", async () => {
    dir = exampleMeshDir("discovery-shutdown-")
    // No send timeout: only the shutdown can end the stuck stream.
    daemon = startDaemon(
      "mesh-discovery",
      discoveryArgs(join(dir, "mesh"), { "--shutdownDuration": `${SHUTDOWN_MS / 1000}s` }),
      { PILOT_XDS_SEND_TIMEOUT: "0s" },
      dir,
    )
    const port = Number((await daemon.waitFor(/ADS server listening on [\d.]+:(\d+)/, 30_000))[1])
    await daemon.waitFor(/first configuration received: serving xDS/, 30_000)
    const session = rawSession(port, { reads: false })
    try {
      const raw = openRawStream(session, "StreamAggregatedResources")
      await raw.send({ node: NODE, type_url: TypeUrl.Cluster })
      // Registered, and its answer (the example mesh's clusters) is waiting for a window.
      await daemon.waitFor(/new connection \S+ node=sidecar~127\.0\.0\.1~stuck/)
      const started = Date.now()
      const code = await daemon.stop("SIGTERM")
      const took = Date.now() - started
      expect(code, daemon.output().slice(-2000)).toBe(0)
      expect(took).toBeLessThan(SHUTDOWN_MS / 2)
      expect(daemon.output()).not.toContain("shutdown did not finish")
      // The stream was reset, not left to the connection's end.
      expect((await raw.closed).rstCode).toBe(8) // NGHTTP2_CANCEL
    } finally {
      session.destroy()
    }
  }, 60_000)
})
