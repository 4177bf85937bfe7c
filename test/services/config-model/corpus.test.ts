/**
 * The validation corpus: documents checked against the reference mesh's current API.
 *
 * Layout: `corpus/<Kind>/{valid,invalid}/<case>.yaml`, one document per file. The first line of
 * every file is a comment naming the reference rule or doc the case comes from
 * (`# DestinationRule warmup.minimumPercent must be 0-100 (CRD x-kubernetes-validations)`). An
 * invalid case may add, as its second line, `# path: <field path>`: the rejection must then name
 * that field (or one below it), so a case cannot pass by failing for another reason.
 *
 * Every case goes through both ways the mesh validates a document, which must agree with the
 * expected outcome: the function `meshctl validate` uses (parseConfigDocuments) and the decision
 * function of the /validate webhook (admit), given the object an orchestrator client would send
 * for the text. Agreement must be at least 98% per path; the disagreements are printed.
 */
import { readdirSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { lookupKind } from "../../../src/services/config-model/kinds.js"
import { parseConfigDocuments, readYamlDocuments } from "../../../src/services/config-model/parse.js"
import { admit } from "../../../src/services/webhook/validation.js"
import { run } from "../../support/processes.js"

const CORPUS = join(import.meta.dirname, "corpus")
const OUTCOMES = ["valid", "invalid"] as const
type Outcome = (typeof OUTCOMES)[number]

/** Least share of cases each path must decide as expected. */
const MIN_AGREEMENT = 0.98

interface Case {
  readonly kind: string
  readonly expected: Outcome
  readonly file: string
  /** Corpus-relative name (`DestinationRule/invalid/warmup-percent.yaml`). */
  readonly name: string
  readonly text: string
  readonly source: string
  readonly expectedPath?: string
}

const caseFiles = (dir: string): ReadonlyArray<string> => {
  try {
    return readdirSync(dir)
      .filter((f) => f.endsWith(".yaml"))
      .sort()
  } catch {
    return []
  }
}

const loadCases = (): ReadonlyArray<Case> => {
  const cases: Array<Case> = []
  for (const kind of readdirSync(CORPUS).sort()) {
    if (!statSync(join(CORPUS, kind)).isDirectory()) continue
    for (const expected of OUTCOMES) {
      for (const f of caseFiles(join(CORPUS, kind, expected))) {
        const file = join(CORPUS, kind, expected, f)
        const text = readFileSync(file, "utf8")
        const [first = "", second = ""] = text.split("\n")
        const path = /^#\s*path:\s*(\S+)\s*$/.exec(second)?.[1]
        cases.push({
          kind,
          expected,
          file,
          name: `${kind}/${expected}/${f}`,
          text,
          source: first.replace(/^#\s*/, ""),
          ...(path !== undefined ? { expectedPath: path } : {}),
        })
      }
    }
  }
  return cases
}

const CASES = loadCases()

interface Verdict {
  readonly accepted: boolean
  /** What the path said (its issues, or why it could not judge). */
  readonly detail: string
  /** Whether the rejection names the case's `# path:` field (true when the case names none). */
  readonly namesPath: boolean
}

const namesField = (path: string | undefined, paths: ReadonlyArray<string>): boolean =>
  path === undefined || paths.some((p) => p === path || p.startsWith(`${path}.`) || p.startsWith(`${path}[`))

/** `meshctl validate`'s verdict: what parseConfigDocuments reports for the file. */
const byMeshctl = (c: Case): Verdict => {
  const { issues } = parseConfigDocuments(c.name, c.text)
  return {
    accepted: issues.length === 0,
    detail: issues.map((i) => `${i.path === "" ? "-" : i.path}: ${i.message}`).join("; "),
    namesPath: namesField(
      c.expectedPath,
      issues.map((i) => i.path),
    ),
  }
}

/** The webhook's verdict on the object an orchestrator client sends for the text (JSON). */
const byWebhook = (c: Case): Verdict => {
  const read = readYamlDocuments(c.text)
  if (Either.isLeft(read)) return { accepted: false, detail: `not sent: ${read.left}`, namesPath: true }
  const documents = read.right.filter((d) => d !== null)
  if (documents.length !== 1) {
    return { accepted: false, detail: `not sent: ${documents.length} documents`, namesPath: true }
  }
  const object = JSON.parse(JSON.stringify(documents[0])) as Record<string, unknown>
  const apiVersion = typeof object.apiVersion === "string" ? object.apiVersion : ""
  const slash = apiVersion.lastIndexOf("/")
  const group = slash < 0 ? "" : apiVersion.slice(0, slash)
  const version = apiVersion.slice(slash + 1)
  const metadata = (object.metadata ?? {}) as Record<string, unknown>
  const decision = admit({
    uid: "corpus",
    operation: "CREATE",
    resource: { group, version, resource: lookupKind(group, String(object.kind))?.plural ?? "" },
    namespace: typeof metadata.namespace === "string" ? metadata.namespace : "default",
    object,
  })
  const message = decision.message ?? ""
  return {
    accepted: decision.allowed,
    detail: message,
    namesPath: c.expectedPath === undefined || message.includes(c.expectedPath),
  }
}

const PATHS = { meshctl: byMeshctl, webhook: byWebhook } as const
type PathName = keyof typeof PATHS

/** Whether a verdict is the one expected: accepted when valid; when invalid, refused for the named field. */
const agrees = (c: Case, v: Verdict): boolean => (c.expected === "valid" ? v.accepted : !v.accepted && v.namesPath)

const RESULTS = CASES.map((c) => ({
  case: c,
  verdicts: { meshctl: byMeshctl(c), webhook: byWebhook(c) } as Record<PathName, Verdict>,
}))

const disagreements = (path: PathName) => RESULTS.filter((r) => !agrees(r.case, r.verdicts[path]))

const describeDisagreement = (path: PathName, r: (typeof RESULTS)[number]): string => {
  const v = r.verdicts[path]
  const got =
    r.case.expected === "valid"
      ? `refused: ${v.detail}`
      : v.accepted
        ? "accepted"
        : `refused without naming ${r.case.expectedPath}: ${v.detail}`
  return `  ${r.case.name} [${r.case.source}] — ${got}`
}

const summary = (): string => {
  const lines: Array<string> = []
  const kinds = [...new Set(CASES.map((c) => c.kind))]
  for (const path of Object.keys(PATHS) as Array<PathName>) {
    const bad = disagreements(path)
    const share = RESULTS.length === 0 ? 1 : (RESULTS.length - bad.length) / RESULTS.length
    lines.push(`${path}: ${RESULTS.length - bad.length}/${RESULTS.length} agree (${(share * 100).toFixed(1)}%)`)
    for (const kind of kinds) {
      const ofKind = RESULTS.filter((r) => r.case.kind === kind)
      const badOfKind = bad.filter((r) => r.case.kind === kind).length
      lines.push(`  ${kind}: ${ofKind.length - badOfKind}/${ofKind.length}`)
    }
    for (const r of bad) lines.push(describeDisagreement(path, r))
  }
  return lines.join("\n")
}

describe("validation corpus", () => {
  it("is well formed: a source comment, one document of the directory's kind, a registered kind", () => {
    expect(CASES.length).toBeGreaterThan(0)
    const problems: Array<string> = []
    for (const c of CASES) {
      if (!c.text.startsWith("#") || c.source.trim() === "") problems.push(`${c.name}: first line must be a comment`)
      const read = readYamlDocuments(c.text)
      if (Either.isLeft(read)) continue // a YAML error may be the case itself
      const documents = read.right.filter((d) => d !== null)
      if (documents.length !== 1) {
        problems.push(`${c.name}: ${documents.length} documents, expected 1`)
        continue
      }
      const document = documents[0] as Record<string, unknown>
      if (document.kind !== c.kind) problems.push(`${c.name}: kind ${String(document.kind)} in the ${c.kind} directory`)
      // An invalid case of an unknown kind or version would be refused for that alone.
      const apiVersion = String(document.apiVersion)
      const info = lookupKind(apiVersion.slice(0, Math.max(0, apiVersion.lastIndexOf("/"))), c.kind)
      if (info === undefined || !info.versions.includes(apiVersion.slice(apiVersion.lastIndexOf("/") + 1))) {
        problems.push(`${c.name}: apiVersion ${apiVersion} is not registered for ${c.kind}`)
      }
    }
    expect(problems).toEqual([])
  })

  it("every kind has valid and invalid cases", () => {
    const kinds = [...new Set(CASES.map((c) => c.kind))]
    const missing = kinds.flatMap((kind) =>
      OUTCOMES.filter((o) => !CASES.some((c) => c.kind === kind && c.expected === o)).map((o) => `${kind}/${o}`),
    )
    expect(missing).toEqual([])
  })

  it.each(Object.keys(PATHS) as Array<PathName>)(
    `the %s path decides at least ${MIN_AGREEMENT * 100}% of the cases as the reference`,
    (path) => {
      const bad = disagreements(path)
      console.log(summary())
      const share = (RESULTS.length - bad.length) / RESULTS.length
      expect(
        share,
        `disagreements on the ${path} path:\n${bad.map((r) => describeDisagreement(path, r)).join("\n")}`,
      ).toBeGreaterThanOrEqual(MIN_AGREEMENT)
    },
  )

  it("the two paths decide every case alike", () => {
    const split = RESULTS.filter((r) => r.verdicts.meshctl.accepted !== r.verdicts.webhook.accepted).map(
      (r) =>
        `${r.case.name}: meshctl ${r.verdicts.meshctl.detail || "accepts"} / webhook ${r.verdicts.webhook.detail || "accepts"}`,
    )
    expect(split).toEqual([])
  })
})

/** The kind whose corpus the built binary is run on. */
const PROCESS_KIND = "DestinationRule"

describe("meshctl validate on the corpus (process)", () => {
  it(`exits 0 on the ${PROCESS_KIND} valid directory and names the field of an invalid case`, async () => {
    const valid = await run("meshctl", ["validate", "-f", join(CORPUS, PROCESS_KIND, "valid")])
    expect(valid.stderr.split("\n").filter((l) => l !== "" && !l.startsWith("Warning:"))).toEqual([])
    expect(valid.code).toBe(0)
    const invalid = CASES.find((c) => c.kind === PROCESS_KIND && c.expected === "invalid" && c.expectedPath)
    expect(invalid).toBeDefined()
    const refused = await run("meshctl", ["validate", "-f", invalid!.file])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain(`field ${invalid!.expectedPath}`)
  })
})
