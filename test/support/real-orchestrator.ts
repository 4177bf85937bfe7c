/**
 * The real orchestrator API server for tests: etcd and kube-apiserver built from their Go modules
 * by scripts/build-orchestrator.sh, started on free loopback ports as a scoped resource. The run
 * gets its own CA (serving certificate for 127.0.0.1/localhost, an admin client certificate in
 * system:masters), service-account signing keys (TokenRequest and TokenReview are real),
 * `--authorization-mode=Node,RBAC` and the admission webhook plugins on. Closing the scope stops
 * both processes and removes the data; they are also killed if this process exits without closing
 * it, and (through `setpriv --pdeathsig`) if it dies outright, so no test leaves one behind.
 *
 * kube-controller-manager runs only when a file asks for it (`controllerManager`): its garbage
 * collector, namespace deletion, EndpointSlice and ServiceAccount-token controllers. Without it
 * nothing garbage-collects or empties a deleted namespace. Either way nothing creates a namespace's
 * `default` ServiceAccount, schedules or readies Pods: `namespace()` creates the ServiceAccount, as
 * the ServiceAccount admission plugin refuses Pods without one.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { request } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Data, Effect, Exit, Scope } from "effect"
import { stringify } from "yaml"
import { freePorts } from "./ports.js"
import { ROOT } from "./processes.js"

const MODULE = join(ROOT, "test/orchestrator/go")

/** The pinned versions (go.mod's require lines) and where the build script puts their binaries. */
export const orchestratorBinaries = (): { kube: string; etcd: string; dir: string } => {
  const mod = readFileSync(join(MODULE, "go.mod"), "utf8")
  const version = (name: string) => {
    const match = mod.match(new RegExp(`^\\s*${name.replaceAll(".", "\\.")}\\s+(v\\S+)`, "m"))
    if (match === null) throw new Error(`${name} is not required in ${MODULE}/go.mod`)
    return match[1]!
  }
  const kube = version("k8s.io/kubernetes")
  const etcd = version("go.etcd.io/etcd/server/v3")
  // kube-controller-manager comes from the same k8s.io/kubernetes module, beside kube-apiserver.
  return { kube, etcd, dir: join(ROOT, "test/orchestrator/bin", `kube-${kube}_etcd-${etcd}`) }
}

/**
 * Why the real API server cannot run here, or undefined when it can. Tests skip with this reason
 * locally and fail with it under CI=true (where .ci/run builds the binaries first).
 */
export const realOrchestratorMissing = (options: RealOrchestratorOptions = {}): string | undefined => {
  const { dir } = orchestratorBinaries()
  for (const name of ["kube-apiserver", "etcd", ...(options.controllerManager === true ? [CONTROLLER_MANAGER] : [])])
    if (!existsSync(join(dir, name)))
      return `${join(dir, name)} is not built: run scripts/build-orchestrator.sh (needs Go; minutes when cold)`
  try {
    execFileSync("openssl", ["version"], { stdio: "ignore" })
  } catch {
    return "openssl is not installed (it makes the run's certificates)"
  }
  return undefined
}

const CONTROLLER_MANAGER = "kube-controller-manager"

/**
 * The controllers kube-controller-manager runs when asked for: garbage collection (owner
 * references), namespace deletion (a deleted namespace emptied and removed), EndpointSlices of
 * selector Services, and the tokens controller (needs the signing key). Not the `serviceaccount`
 * controller: `namespace()` makes the `default` account itself, as without a controller-manager.
 */
export const CONTROLLERS = ["garbagecollector", "namespace", "endpointslice", "serviceaccount-token"] as const

export interface RealOrchestratorOptions {
  /** Also run kube-controller-manager (CONTROLLERS) with the admin kubeconfig; it adds about 0.3 s. */
  readonly controllerManager?: boolean
  /**
   * `false` serves watches from etcd instead of the API server's watch cache, so a watch resumed
   * from a version etcd compacted away gets 410 Gone (the cache would serve it from memory).
   */
  readonly watchCache?: boolean
}

/** The real API server could not be started: binaries missing, a process exited, /readyz never answered. */
export class RealOrchestratorError extends Data.TaggedError("RealOrchestratorError")<{ readonly message: string }> {}

export interface ApiAnswer {
  readonly status: number
  /** The parsed JSON body (a Status for errors), or the text when it is not JSON. */
  // biome-ignore lint/suspicious/noExplicitAny: API objects are walked loosely in tests
  readonly body: any
  /** `Warning` headers (unknown fields dropped, deprecated APIs). */
  readonly warnings: ReadonlyArray<string>
}

export interface ApiRequestOptions {
  readonly body?: unknown
  readonly contentType?: string
  /** Authenticate with this bearer token instead of the admin client certificate. */
  readonly token?: string
  /** Extra headers (Impersonate-User, say); the admin may impersonate anyone. */
  readonly headers?: Readonly<Record<string, string>>
}

export interface RealOrchestrator {
  /** `https://127.0.0.1:<port>` */
  readonly url: string
  readonly port: number
  /** The run's CA: it signed the serving and admin certificates. */
  readonly caPem: string
  readonly versions: { readonly kube: string; readonly etcd: string }
  /** A kubeconfig authenticating as the admin (system:masters) by client certificate. */
  readonly kubeconfig: string
  /** The admin kubeconfig for another address of this server (`https://127.0.0.1:<relay port>`). */
  readonly kubeconfigVia: (server: string) => string
  /** A kubeconfig authenticating with `token` (a ServiceAccount's, say). */
  readonly kubeconfigWithToken: (token: string) => string
  /** One request to the API server, as the admin unless `token` is given. */
  readonly api: (method: string, path: string, options?: ApiRequestOptions) => Promise<ApiAnswer>
  /** Like `api`, failing unless the answer is 2xx. */
  // biome-ignore lint/suspicious/noExplicitAny: API objects are walked loosely in tests
  readonly ok: (method: string, path: string, options?: ApiRequestOptions) => Promise<any>
  /** Creates a namespace `<prefix>-<n>` with `labels` and its `default` ServiceAccount; returns its name. */
  readonly namespace: (prefix: string, labels?: Readonly<Record<string, string>>) => Promise<string>
  /** Kills kube-apiserver (SIGKILL: a crash, its watches cut) and starts it again on the same port and etcd; resolves when ready. */
  readonly restart: () => Promise<void>
  /** The API server's and etcd's output so far (for failure messages). */
  readonly logs: () => string
  /** Milliseconds from spawning etcd to the API server's /readyz answering 200. */
  readonly startMillis: number
  /** etcd's client URL (`http://127.0.0.1:<port>`), for its v3 HTTP gateway. */
  readonly etcdUrl: string
  /**
   * Compacts etcd's history up to its current revision through the v3 HTTP gateway (physically:
   * waits until done), so every watch from an older resourceVersion gets 410 Gone. Returns the revision.
   */
  readonly compactEtcd: () => Promise<number>
  /** Whether kube-controller-manager runs (the file asked for it). */
  readonly controllerManager: boolean
}

interface Certs {
  readonly ca: string
  readonly caKey: string
  readonly serving: { cert: string; key: string }
  readonly admin: { cert: string; key: string }
  readonly saKey: string
  readonly saPub: string
}

/** The run's certificates and keys, made by openssl into `dir` (EC P-256 throughout). */
const makeCerts = (dir: string): Certs => {
  const sh = (args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
  sh([
    "req",
    "-x509",
    ...ec,
    "-days",
    "2",
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-subj",
    "/CN=mesh-test-orchestrator-ca",
  ])
  const leaf = (name: string, subject: string, extensions: string) => {
    sh(["req", "-new", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject])
    writeFileSync(join(dir, `${name}.ext`), extensions)
    sh(
      ["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"].concat([
        "-days",
        "2",
        "-extfile",
        `${name}.ext`,
        "-out",
        `${name}.crt`,
      ]),
    )
    return { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) }
  }
  const serving = leaf(
    "serving",
    "/CN=kube-apiserver",
    "subjectAltName=IP:127.0.0.1,DNS:localhost,DNS:kubernetes.default.svc\nextendedKeyUsage=serverAuth\n",
  )
  // system:masters: the group RBAC lets do everything (as a cluster's admin kubeconfig does).
  const admin = leaf("admin", "/O=system:masters/CN=mesh-test-admin", "extendedKeyUsage=clientAuth\n")
  sh(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", "sa.key"])
  sh(["ec", "-in", "sa.key", "-pubout", "-out", "sa.pub"])
  return {
    ca: join(dir, "ca.crt"),
    caKey: join(dir, "ca.key"),
    serving,
    admin,
    saKey: join(dir, "sa.key"),
    saPub: join(dir, "sa.pub"),
  }
}

/** setpriv (util-linux) makes the kernel kill the child when this process dies, even by SIGKILL. */
const hasSetpriv = (): boolean => {
  try {
    execFileSync("setpriv", ["--help"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

interface Child {
  readonly process: ChildProcess
  readonly output: () => string
  readonly exited: Promise<void>
}

const startChild = (file: string, args: ReadonlyArray<string>, pdeath: boolean): Child => {
  const child = pdeath
    ? spawn("setpriv", ["--pdeathsig", "SIGKILL", "--", file, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    : spawn(file, args, { stdio: ["ignore", "pipe", "pipe"] })
  // Only the tail is kept: a verbose server must not grow the test process without bound.
  let text = ""
  const append = (chunk: Buffer) => {
    text = (text + chunk.toString()).slice(-200_000)
  }
  child.stdout?.on("data", append)
  child.stderr?.on("data", append)
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  return { process: child, output: () => text, exited }
}

const running = (child: Child) => child.process.exitCode === null && child.process.signalCode === null

/** SIGTERM, then SIGKILL after `graceMillis`; resolves once it has exited. */
const stopChild = async (child: Child, graceMillis: number): Promise<void> => {
  if (!running(child)) return
  child.process.kill("SIGTERM")
  const timer = setTimeout(() => child.process.kill("SIGKILL"), graceMillis)
  await child.exited
  clearTimeout(timer)
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM"
  }
}

/**
 * Removes the data of runs whose test process died without closing its scope (killed outright:
 * pdeathsig stopped the servers, nothing removed their etcd data, some 100 MB each).
 */
const removeOrphanedDirs = () => {
  for (const name of readdirSync(tmpdir())) {
    const pid = /^real-orchestrator-(\d+)-/.exec(name)?.[1]
    if (pid !== undefined && !alive(Number(pid))) rmSync(join(tmpdir(), name), { recursive: true, force: true })
  }
}

const kubeconfigYaml = (server: string, caPem: string, user: Record<string, string>): string =>
  stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "real", cluster: { server, "certificate-authority-data": Buffer.from(caPem).toString("base64") } },
    ],
    users: [{ name: "real", user }],
    contexts: [{ name: "real", context: { cluster: "real", user: "real" } }],
    "current-context": "real",
  })

/**
 * Starts etcd and kube-apiserver, waits for /readyz, and stops both when the scope closes. Fails
 * (with the reason) when the binaries are missing: callers decide whether that skips.
 */
export const realOrchestratorWith = (
  options: RealOrchestratorOptions = {},
): Effect.Effect<RealOrchestrator, RealOrchestratorError, Scope.Scope> =>
  Effect.gen(function* () {
    const missing = realOrchestratorMissing(options)
    if (missing !== undefined) return yield* new RealOrchestratorError({ message: missing })
    const { kube, etcd, dir: bin } = orchestratorBinaries()
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => {
        removeOrphanedDirs()
        return mkdtempSync(join(tmpdir(), `real-orchestrator-${process.pid}-`))
      }),
      (d) => Effect.sync(() => rmSync(d, { recursive: true, force: true })),
    )
    const certs = makeCerts(dir)
    const caPem = readFileSync(certs.ca, "utf8")
    const adminCert = readFileSync(certs.admin.cert, "utf8")
    const adminKey = readFileSync(certs.admin.key, "utf8")
    const [clientPort, peerPort, securePort] = yield* Effect.promise(() => freePorts(3)) as Effect.Effect<
      [number, number, number]
    >
    const pdeath = hasSetpriv()
    const started = Date.now()

    // Both processes are killed if this process exits without closing the scope (a worker torn down
    // after a timeout): 'exit' handlers run synchronously, so a plain SIGKILL.
    const children: Array<Child> = []
    const killAll = () => {
      for (const child of children) if (running(child)) child.process.kill("SIGKILL")
    }
    yield* Effect.acquireRelease(
      Effect.sync(() => process.once("exit", killAll)),
      () => Effect.sync(() => process.off("exit", killAll)),
    )

    const etcdUrl = `http://127.0.0.1:${clientPort}`
    const etcdChild = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const child = startChild(
          join(bin, "etcd"),
          [
            "--name=test",
            `--data-dir=${join(dir, "etcd")}`,
            `--listen-client-urls=${etcdUrl}`,
            `--advertise-client-urls=${etcdUrl}`,
            `--listen-peer-urls=http://127.0.0.1:${peerPort}`,
            `--initial-advertise-peer-urls=http://127.0.0.1:${peerPort}`,
            `--initial-cluster=test=http://127.0.0.1:${peerPort}`,
            // A test's data is thrown away: no fsync keeps etcd from waiting on the disk of a shared machine.
            "--unsafe-no-fsync",
            "--log-level=warn",
          ],
          pdeath,
        )
        children.push(child)
        return child
      }),
      (child) => Effect.promise(() => stopChild(child, 5_000)),
    )

    const url = `https://127.0.0.1:${securePort}`
    mkdirSync(join(dir, "apiserver"))
    const apiArgs = [
      `--etcd-servers=${etcdUrl}`,
      "--bind-address=127.0.0.1",
      "--advertise-address=127.0.0.1",
      `--secure-port=${securePort}`,
      `--cert-dir=${join(dir, "apiserver")}`,
      `--tls-cert-file=${certs.serving.cert}`,
      `--tls-private-key-file=${certs.serving.key}`,
      `--client-ca-file=${certs.ca}`,
      `--service-account-key-file=${certs.saPub}`,
      `--service-account-signing-key-file=${certs.saKey}`,
      "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
      "--authorization-mode=Node,RBAC",
      "--enable-admission-plugins=MutatingAdmissionWebhook,ValidatingAdmissionWebhook",
      "--service-cluster-ip-range=10.96.0.0/16",
      "--allow-privileged=true",
      "--profiling=false",
      ...(options.watchCache === false ? ["--watch-cache=false"] : []),
    ]
    const spawnApiServer = () => {
      const child = startChild(join(bin, "kube-apiserver"), apiArgs, pdeath)
      children.push(child)
      return child
    }
    // The current API server process: `restart` replaces it, the scope stops whichever runs.
    let apiChild: Child = yield* Effect.acquireRelease(
      Effect.sync(spawnApiServer),
      (): Effect.Effect<void> => Effect.promise(() => stopChild(apiChild, 10_000)),
    )
    let controllerChild: Child | undefined
    const logs = () =>
      `--- kube-apiserver ---\n${apiChild.output()}\n--- etcd ---\n${etcdChild.output()}` +
      (controllerChild === undefined ? "" : `\n--- kube-controller-manager ---\n${controllerChild.output()}`)

    const api = (method: string, path: string, options: ApiRequestOptions = {}): Promise<ApiAnswer> =>
      new Promise((resolve, reject) => {
        const body = options.body === undefined ? undefined : JSON.stringify(options.body)
        const req = request(
          {
            host: "127.0.0.1",
            port: securePort,
            method,
            path,
            ca: caPem,
            ...(options.token === undefined ? { cert: adminCert, key: adminKey } : {}),
            headers: {
              accept: "application/json",
              ...(options.token === undefined ? {} : { authorization: `Bearer ${options.token}` }),
              ...(body === undefined ? {} : { "content-type": options.contentType ?? "application/json" }),
              ...options.headers,
            },
            timeout: 30_000,
          },
          (res) => {
            let text = ""
            res.setEncoding("utf8")
            res.on("data", (chunk: string) => {
              text += chunk
            })
            res.on("end", () => {
              let parsed: unknown = text
              try {
                parsed = JSON.parse(text)
              } catch {
                // not JSON: /readyz and friends answer text
              }
              const warning = res.headers.warning
              const warnings = warning === undefined ? [] : Array.isArray(warning) ? warning : [warning]
              resolve({ status: res.statusCode ?? 0, body: parsed, warnings })
            })
          },
        )
        req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)))
        req.on("error", reject)
        req.end(body)
      })

    // /readyz answers 200 once every post-start hook (RBAC bootstrap roles, priority classes, ...) is done.
    const waitReady = async () => {
      const deadline = Date.now() + 120_000
      for (;;) {
        for (const [name, child] of [
          ["etcd", etcdChild],
          ["kube-apiserver", apiChild],
        ] as const)
          if (!running(child)) throw new Error(`${name} exited during start-up:\n${logs().slice(-8_000)}`)
        const answer = await api("GET", "/readyz").catch(() => undefined)
        if (answer?.status === 200) return
        if (Date.now() > deadline) throw new Error(`/readyz did not answer 200 in 120 s:\n${logs().slice(-8_000)}`)
        await new Promise((r) => setTimeout(r, 100))
      }
    }
    yield* Effect.tryPromise({
      try: waitReady,
      catch: (e) => new RealOrchestratorError({ message: e instanceof Error ? e.message : String(e) }),
    })
    const startMillis = Date.now() - started

    const kubeconfig = join(dir, "admin.kubeconfig")
    writeFileSync(
      kubeconfig,
      kubeconfigYaml(url, caPem, {
        "client-certificate-data": Buffer.from(adminCert).toString("base64"),
        "client-key-data": Buffer.from(adminKey).toString("base64"),
      }),
    )
    if (options.controllerManager === true) {
      // Started once the API server is ready (it would only retry before); not waited for: its
      // controllers start within a second, and tests wait for what they do.
      controllerChild = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const child = startChild(
            join(bin, CONTROLLER_MANAGER),
            [
              `--kubeconfig=${kubeconfig}`,
              `--controllers=${CONTROLLERS.join(",")}`,
              // One client for every controller: no per-controller ServiceAccounts to wait for.
              "--use-service-account-credentials=false",
              `--service-account-private-key-file=${certs.saKey}`,
              `--root-ca-file=${certs.ca}`,
              "--leader-elect=false",
              // No serving port: nothing here scrapes or probes it.
              "--secure-port=0",
              "--profiling=false",
              "--v=1",
            ],
            pdeath,
          )
          children.push(child)
          return child
        }),
        (child) => Effect.promise(() => stopChild(child, 5_000)),
      )
    }

    const compactEtcd = async (): Promise<number> => {
      const post = async (path: string, body: unknown) => {
        const res = await fetch(`${etcdUrl}${path}`, { method: "POST", body: JSON.stringify(body) })
        const json = (await res.json()) as { header?: { revision?: string } }
        if (!res.ok) throw new Error(`etcd ${path}: ${res.status} ${JSON.stringify(json)}`)
        return json
      }
      // Any range answers with the store's current revision in its header ("AA==" is key "\0").
      const current = Number((await post("/v3/kv/range", { key: "AA==", limit: 1 })).header?.revision)
      if (!Number.isSafeInteger(current) || current < 1) throw new Error("etcd gave no current revision")
      await post("/v3/kv/compaction", { revision: String(current), physical: true })
      return current
    }

    let kubeconfigs = 0
    const kubeconfigVia = (server: string) => {
      const path = join(dir, `via-${++kubeconfigs}.kubeconfig`)
      writeFileSync(
        path,
        kubeconfigYaml(server, caPem, {
          "client-certificate-data": Buffer.from(adminCert).toString("base64"),
          "client-key-data": Buffer.from(adminKey).toString("base64"),
        }),
      )
      return path
    }
    const kubeconfigWithToken = (token: string) => {
      const path = join(dir, `token-${++kubeconfigs}.kubeconfig`)
      writeFileSync(path, kubeconfigYaml(url, caPem, { token }))
      return path
    }

    const ok = async (method: string, path: string, options?: ApiRequestOptions) => {
      const answer = await api(method, path, options)
      if (answer.status < 200 || answer.status >= 300)
        throw new Error(`${method} ${path}: ${answer.status} ${JSON.stringify(answer.body)}`)
      return answer.body
    }

    let namespaces = 0
    const namespace = async (prefix: string, labels: Readonly<Record<string, string>> = {}) => {
      const name = `${prefix}-${++namespaces}`
      await ok("POST", "/api/v1/namespaces", {
        body: { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } },
      })
      await ok("POST", `/api/v1/namespaces/${name}/serviceaccounts`, {
        body: { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "default" } },
      })
      return name
    }

    // Killed outright, as a crash: a graceful stop waits on open watches for longer than tests should.
    const restart = async () => {
      apiChild.process.kill("SIGKILL")
      await apiChild.exited
      apiChild = spawnApiServer()
      await waitReady()
    }

    return {
      url,
      port: securePort,
      restart,
      caPem,
      versions: { kube, etcd },
      kubeconfig,
      kubeconfigWithToken,
      kubeconfigVia,
      api,
      ok,
      namespace,
      logs,
      startMillis,
      etcdUrl,
      compactEtcd,
      controllerManager: controllerChild !== undefined,
    }
  })

/** etcd and kube-apiserver only. */
export const realOrchestrator: Effect.Effect<RealOrchestrator, RealOrchestratorError, Scope.Scope> =
  realOrchestratorWith()

/**
 * One real API server for a test file: started in `beforeAll`, stopped in `afterAll` (vitest's
 * hooks are passed in so this module does not import vitest). Returns a getter, and whether the
 * file's tests should run: without the binaries they skip locally and fail under CI=true.
 */
export const realOrchestratorPerFile = (
  hooks: {
    beforeAll: (fn: () => Promise<void>, timeout?: number) => void
    afterAll: (fn: () => Promise<void>, timeout?: number) => void
  },
  options: RealOrchestratorOptions = {},
): { readonly get: () => RealOrchestrator; readonly skip: boolean; readonly reason: string | undefined } => {
  const reason = realOrchestratorMissing(options)
  const skip = reason !== undefined && process.env.CI !== "true"
  if (skip) console.warn(`skipping the real orchestrator tests: ${reason}`)
  let scope: Scope.CloseableScope | undefined
  let server: RealOrchestrator | undefined
  hooks.beforeAll(async () => {
    if (skip) return
    scope = Effect.runSync(Scope.make())
    server = await Effect.runPromise(Scope.extend(realOrchestratorWith(options), scope))
  }, 150_000)
  hooks.afterAll(async () => {
    if (scope !== undefined) await Effect.runPromise(Scope.close(scope, Exit.void))
  }, 30_000)
  return {
    get: () => {
      if (server === undefined) throw new Error(`the real orchestrator did not start${reason ? `: ${reason}` : ""}`)
      return server
    },
    skip,
    reason,
  }
}
