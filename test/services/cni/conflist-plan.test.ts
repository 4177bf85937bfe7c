/**
 * Choosing the primary network and planning the write: malformed configs are errors (never a
 * plan to rewrite them), the runtime's lexical choice is followed, the installer's own files are
 * never the primary, and each mode (chained, `.conf` conversion, mesh-owned, standalone) writes
 * where it should, and nothing when the directory is already as it should be.
 */
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { insertMeshPlugin, parseCniConfig, removeMeshPlugin } from "../../../src/services/cni/conflist-merge.js"
import { planConfig } from "../../../src/services/cni/conflist-plan.js"
import { selectPrimaryConfig } from "../../../src/services/cni/conflist-select.js"
import { DEFAULT_TEMPLATE, fillPlaceholders, renderMeshEntry } from "../../../src/services/cni/conflist-template.js"

const entry = { cniVersion: "0.3.1", name: "mesh-cni", type: "mesh-cni", kubernetes: { kubeconfig: "/k" } }
const list = (...types: Array<string>) =>
  JSON.stringify({ cniVersion: "0.3.1", name: "net", plugins: types.map((type) => ({ type })) })
const chained = { chained: true, confName: "", meshOwned: false, meshOwnedFilename: "" }

describe("parseCniConfig", () => {
  it.each([
    ["10-a.conflist", "{ not json", "not valid JSON"],
    ["10-a.conflist", "[]", "not a JSON object"],
    ["10-a.conflist", '{"plugins": {}}', '"plugins" is not a list'],
    ["10-a.conflist", '{"plugins": [{"type": "x"}, {"name": "y"}]}', 'plugins[1] is not an object with a "type"'],
    ["10-a.conflist", '{"type": "bridge"}', 'a .conflist without "plugins"'],
    ["10-a.conf", '{"name": "x"}', 'no "type"'],
  ])("refuses %s %s", (file, text, reason) => {
    const parsed = parseCniConfig(file, text)
    expect(Either.isLeft(parsed)).toBe(true)
    if (Either.isLeft(parsed)) {
      expect(parsed.left.file).toBe(file)
      expect(parsed.left.reason).toContain(reason)
    }
  })

  it("makes a malformed file an error for merging and removal alike", () => {
    expect(Either.isLeft(insertMeshPlugin("10-a.conflist", "{", entry))).toBe(true)
    expect(Either.isLeft(removeMeshPlugin("10-a.conflist", "{"))).toBe(true)
  })
})

describe("selectPrimaryConfig", () => {
  const own = { confName: "", ownFiles: ["02-mesh-cni.conflist", "YYY-mesh-cni.conf"] }

  it("takes the first valid .conf/.conflist in lexical order, skipping malformed, empty and own files", () => {
    const selection = selectPrimaryConfig(
      [
        { name: "30-c.conflist", text: list("c") },
        { name: "02-mesh-cni.conflist", text: list("a", "mesh-cni") },
        { name: "05-broken.conflist", text: "{" },
        { name: "07-empty.conflist", text: list() },
        { name: "10-b.conf", text: '{"type": "bridge"}' },
        { name: "00-notes.json", text: list("z") },
      ],
      own,
    )
    expect(selection._tag).toBe("Found")
    if (selection._tag === "Found") {
      expect(selection.file).toBe("10-b.conf")
      expect(selection.skipped.map((e) => e.file)).toEqual(["05-broken.conflist"])
    }
  })

  it("waits when there is no network yet", () => {
    expect(selectPrimaryConfig([], own)._tag).toBe("Missing")
  })

  it("uses --cni-conf-name, falling back to its .conf/.conflist twin, and reports it malformed rather than skipping it", () => {
    const files = [
      { name: "10-a.conflist", text: list("a") },
      { name: "20-b.conflist", text: "{" },
    ]
    expect(selectPrimaryConfig(files, { ...own, confName: "10-a.conf" })).toMatchObject({ file: "10-a.conflist" })
    expect(selectPrimaryConfig(files, { ...own, confName: "20-b.conflist" })._tag).toBe("Malformed")
    expect(selectPrimaryConfig(files, { ...own, confName: "30-c.conflist" })._tag).toBe("Missing")
  })
})

describe("planConfig", () => {
  it("chains into the primary list, and finds nothing to do once it is there", () => {
    const files = [{ name: "10-calico.conflist", text: list("calico", "portmap") }]
    const plan = planConfig(chained, files, entry)
    expect(plan).toMatchObject({ _tag: "Write", file: "10-calico.conflist" })
    if (plan._tag !== "Write") return
    expect(JSON.parse(plan.text).plugins.map((p: { type: string }) => p.type)).toEqual([
      "calico",
      "portmap",
      "mesh-cni",
    ])
    expect(planConfig(chained, [{ name: plan.file, text: plan.text }], entry)).toEqual({
      _tag: "UpToDate",
      file: "10-calico.conflist",
    })
  })

  it("turns a .conf into a .conflist that replaces it", () => {
    const plan = planConfig(
      chained,
      [{ name: "10-bridge.conf", text: '{"cniVersion":"0.4.0","type":"bridge"}' }],
      entry,
    )
    expect(plan).toMatchObject({ _tag: "Write", file: "10-bridge.conflist", replaces: "10-bridge.conf" })
  })

  it("writes the mesh-owned list beside the primary, which stays as it is", () => {
    const primary = { name: "10-calico.conflist", text: list("calico") }
    const settings = { ...chained, meshOwned: true }
    const plan = planConfig(settings, [primary], entry)
    expect(plan).toMatchObject({ _tag: "Write", file: "02-mesh-cni.conflist" })
    if (plan._tag !== "Write") return
    expect(plan.replaces).toBeUndefined()
    const named = planConfig({ ...settings, meshOwnedFilename: "01-custom.conflist" }, [primary], entry)
    expect(named).toMatchObject({ file: "01-custom.conflist" })
    // Its own file is never taken for the primary on the next pass.
    expect(planConfig(settings, [primary, { name: plan.file, text: plan.text }], entry)._tag).toBe("UpToDate")
  })

  it("writes the template as its own file in standalone mode", () => {
    const plan = planConfig({ ...chained, chained: false }, [], entry)
    expect(plan).toMatchObject({ _tag: "Write", file: "YYY-mesh-cni.conf" })
    if (plan._tag === "Write") expect(JSON.parse(plan.text)).toEqual(entry)
  })

  it("never plans to overwrite a malformed primary", () => {
    const plan = planConfig({ ...chained, confName: "10-a.conflist" }, [{ name: "10-a.conflist", text: "{" }], entry)
    expect(plan._tag).toBe("Malformed")
  })
})

describe("template", () => {
  it("fills every reference placeholder", () => {
    const text = fillPlaceholders(
      "__LOG_LEVEL__ __LOG_UDS_ADDRESS__ __KUBECONFIG_FILENAME__ __KUBECONFIG_FILEPATH__ __KUBERNETES_SERVICE_HOST__ __KUBERNETES_SERVICE_PORT__ __KUBERNETES_NODE_NAME__",
      {
        logLevel: "debug",
        logUdsAddress: "/log",
        kubeconfigFilename: "kc",
        kubeconfigFilepath: "/net/kc",
        serviceHost: "10.0.0.1",
        servicePort: "443",
        nodeName: "n1",
      },
    )
    expect(text).toBe("debug /log kc /net/kc 10.0.0.1 443 n1")
  })

  it("refuses a template that is not JSON or not the mesh plugin", () => {
    const values = {
      logLevel: "warn",
      logUdsAddress: "",
      kubeconfigFilename: "kc",
      kubeconfigFilepath: "/kc",
      serviceHost: "h",
      servicePort: "1",
      nodeName: "n",
    }
    expect(Either.isRight(renderMeshEntry("built-in", DEFAULT_TEMPLATE, values))).toBe(true)
    expect(Either.isLeft(renderMeshEntry("s", "{", values))).toBe(true)
    expect(Either.isLeft(renderMeshEntry("s", '{"type":"istio-cni"}', values))).toBe(true)
  })
})
