/**
 * Golden cases of chaining the mesh plugin into real-world CNI configs: each
 * `golden/<case>.input.<conf|conflist>` merged with the plugin entry of the built-in template
 * must give `golden/<case>.expected.conflist` byte for byte (fields and plugins in their original
 * order, the mesh entry last and only once). Taking the entry out again must give back the
 * original network (a `.conf` exactly as it was). `UPDATE_GOLDEN=1` rewrites the expected files;
 * review their diff before keeping it.
 */
import { readdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import {
  containsMeshPlugin,
  insertMeshPlugin,
  parseCniConfig,
  removeMeshPlugin,
} from "../../../src/services/cni/conflist-merge.js"
import { DEFAULT_TEMPLATE, renderMeshEntry } from "../../../src/services/cni/conflist-template.js"
import { KUBECONFIG_FILENAME } from "../../../src/services/cni/install-settings.js"

const dir = join(import.meta.dirname, "golden")
const update = process.env.UPDATE_GOLDEN === "1"
const inputs = readdirSync(dir)
  .filter((f) => /\.input\.conf(list)?$/.test(f))
  .sort()

const meshEntry = Either.getOrThrow(
  renderMeshEntry("built-in", DEFAULT_TEMPLATE, {
    logLevel: "warn",
    logUdsAddress: "",
    kubeconfigFilename: KUBECONFIG_FILENAME,
    kubeconfigFilepath: `/host/etc/cni/net.d/${KUBECONFIG_FILENAME}`,
    serviceHost: "10.96.0.1",
    servicePort: "443",
    nodeName: "node-1",
  }),
)

type Json = Record<string, unknown>
const pluginsOf = (text: string): Array<Json> => (JSON.parse(text) as { plugins: Array<Json> }).plugins

describe("conflist golden cases", () => {
  it("covers Calico, Cilium chained, flannel, kindnet and a single-plugin .conf", () => {
    expect(inputs.map((f) => f.split(".")[0])).toEqual(
      expect.arrayContaining(["calico", "cilium-chained", "flannel", "kindnet", "bridge"]),
    )
  })

  for (const input of inputs) {
    const name = input.slice(0, input.indexOf(".input."))
    const inputName = `10-${name}.${input.endsWith(".conf") ? "conf" : "conflist"}`
    it(name, () => {
      const original = readFileSync(join(dir, input), "utf8")
      const merged = Either.getOrThrow(insertMeshPlugin(inputName, original, meshEntry))
      const expectedFile = join(dir, `${name}.expected.conflist`)
      if (update) writeFileSync(expectedFile, merged.text)
      expect(merged.text).toBe(readFileSync(expectedFile, "utf8"))
      expect(merged.file).toBe(inputName.endsWith(".conf") ? `${inputName}list` : inputName)

      // Exactly one mesh entry, last, without a cniVersion of its own.
      const plugins = pluginsOf(merged.text)
      expect(plugins.filter((p) => p.type === "mesh-cni")).toHaveLength(1)
      const { cniVersion: _, ...entryInList } = meshEntry
      expect(plugins.at(-1)).toEqual(entryInList)

      // Merging again changes nothing.
      expect(Either.getOrThrow(insertMeshPlugin(merged.file, merged.text, meshEntry)).text).toBe(merged.text)

      // Removal gives back the original network.
      const restored = Either.getOrThrow(removeMeshPlugin(merged.file, merged.text, { restoreSingle: true }))
      expect(restored).toBeDefined()
      const parsedOriginal = Either.getOrThrow(parseCniConfig(inputName, original))
      if (parsedOriginal._tag === "Single") {
        expect(JSON.parse(restored!)).toEqual(parsedOriginal.config)
        expect(Object.keys(JSON.parse(restored!))).toEqual(Object.keys(parsedOriginal.config))
      } else {
        const withoutMesh = {
          ...parsedOriginal.config,
          plugins: parsedOriginal.plugins.filter((p) => p.type !== "mesh-cni"),
        }
        expect(JSON.parse(restored!)).toEqual(withoutMesh)
        expect(JSON.stringify(JSON.parse(restored!))).toBe(JSON.stringify(withoutMesh))
      }
      const restoredName = parsedOriginal._tag === "Single" ? inputName : merged.file
      expect(containsMeshPlugin(Either.getOrThrow(parseCniConfig(restoredName, restored!)))).toBe(false)
    })
  }
})
