/**
 * Certificates made by the real `openssl` for the end-to-end tests: a throw-away EC P-256 CA
 * and a serving certificate it signs, written to `dir` as `<name>-ca.crt`, `<name>.key` and
 * `<name>.crt`.
 */
import { execFileSync } from "node:child_process"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"

export interface OpensslServerCert {
  readonly caPem: string
  readonly certPem: string
  readonly keyPem: string
}

/** `subjectAltName` is openssl's extension value, e.g. `DNS:meshd.mesh-system.svc`. */
export const opensslServerCert = (dir: string, name: string, subjectAltName: string): OpensslServerCert => {
  const sh = (args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: "pipe" })
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
  sh([
    "req",
    "-x509",
    ...ec,
    "-days",
    "1",
    "-keyout",
    `${name}-ca.key`,
    "-out",
    `${name}-ca.crt`,
    "-subj",
    `/O=${name} test CA`,
  ])
  sh(["req", "-new", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/O=${name}`])
  writeFileSync(join(dir, `${name}.ext`), `subjectAltName=${subjectAltName}\n`)
  sh(
    [
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${name}-ca.crt`,
      "-CAkey",
      `${name}-ca.key`,
      "-CAcreateserial",
    ].concat(["-days", "1", "-extfile", `${name}.ext`, "-out", `${name}.crt`]),
  )
  return {
    caPem: readFileSync(join(dir, `${name}-ca.crt`), "utf8"),
    certPem: readFileSync(join(dir, `${name}.crt`), "utf8"),
    keyPem: readFileSync(join(dir, `${name}.key`), "utf8"),
  }
}

/** What `openssl s_client` prints after a TLS handshake with `127.0.0.1:port` for `serverName`. */
export const opensslConnect = (port: number, serverName: string, extra: ReadonlyArray<string> = []): string =>
  execFileSync("openssl", ["s_client", "-connect", `127.0.0.1:${port}`, "-servername", serverName, ...extra], {
    input: "",
    stdio: ["pipe", "pipe", "pipe"],
    timeout: 10_000,
  }).toString()
