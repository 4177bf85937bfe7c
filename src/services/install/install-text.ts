/**
 * The words meshctl's install and uninstall print: the confirmation prompts, the component
 * titles of the progress lines, and how an answer is read.
 */
import type { ResolvedOperator } from "./resolve.js"

const TITLES: Readonly<Record<string, string>> = {
  Base: "Mesh core",
  Pilot: "Meshd",
  Cni: "CNI",
  Ztunnel: "Node proxy",
  IngressGateways: "Ingress gateways",
  EgressGateways: "Egress gateways",
}

/** `Pilot` → `Meshd`; unknown components keep their label. */
export const componentTitle = (component: string): string => TITLES[component] ?? component

const listWords = (words: ReadonlyArray<string>): string =>
  words.length <= 1
    ? (words[0] ?? "")
    : words.length === 2
      ? `${words[0]} and ${words[1]}`
      : `${words.slice(0, -1).join(", ")}, and ${words[words.length - 1]}`

const revisionText = (revision: string): string => (revision === "" ? "" : ` with revision "${revision}"`)

/** The question `install` asks before changing the cluster. */
export const installPrompt = (op: ResolvedOperator, components: ReadonlyArray<string>): string => {
  const profile = op.spec.profile ?? "default"
  const what = components.length === 0 ? "no components" : `components: ${listWords(components.map(componentTitle))}`
  return `This will install the mesh "${profile}" profile (with ${what})${revisionText(op.revision)} into the cluster. Proceed? (y/N) `
}

/** The question `uninstall` asks. */
export const uninstallPrompt = (purge: boolean, revision: string): string =>
  purge
    ? "All mesh resources of every revision will be removed from the cluster, custom resource definitions included. Proceed? (y/N) "
    : `All mesh resources of the ${revision === "" ? "default" : `"${revision}"`} revision will be removed from the cluster. Proceed? (y/N) `

/** Only an explicit yes proceeds. */
export const isYes = (answer: string | undefined): boolean => /^\s*y(es)?\s*$/i.test(answer ?? "")

export const installedLine = (component: string): string => `✔ ${componentTitle(component)} installed`
