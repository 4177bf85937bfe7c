/** Helpers for the CA-on-the-orchestrator tests: polling for a condition, openssl CAs as PEM. */
import { readFile, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Data, Duration, Effect, Schedule } from "effect"
import { execFileAsync } from "../helpers.js"

export class WaitTimeout extends Data.TaggedError("WaitTimeout")<{ readonly what: string }> {}

/** Retries `check` (which fails or returns false) until it holds, for up to `timeout`. */
export const eventually = <E, R>(
  check: Effect.Effect<boolean, E, R>,
  what: string,
  timeout: Duration.DurationInput = "10 seconds",
): Effect.Effect<void, WaitTimeout, R> =>
  check.pipe(
    Effect.orElseSucceed(() => false),
    Effect.repeat({ until: (ok) => ok, schedule: Schedule.spaced("20 millis") }),
    Effect.timeoutFail({ duration: Duration.decode(timeout), onTimeout: () => new WaitTimeout({ what }) }),
    Effect.asVoid,
  )

const openssl = (...args: Array<string>) => execFileAsync("openssl", args)

/** An openssl root CA and an intermediate it signs (`name`), as the cacerts keys' texts. */
export const opensslIntermediate = async (dir: string, name: string) => {
  const root = join(dir, "root")
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
  try {
    await readFile(`${root}.pem`)
  } catch {
    await openssl(
      "req",
      "-x509",
      ...ec,
      "-keyout",
      `${root}.key`,
      "-out",
      `${root}.pem`,
      "-days",
      "30",
      "-subj",
      "/O=test/CN=Test Root CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    )
  }
  await writeFile(join(dir, "ext.cnf"), "basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign\n")
  const int = join(dir, name)
  await openssl("req", "-new", ...ec, "-keyout", `${int}.key`, "-out", `${int}.csr`, "-subj", `/O=test/CN=${name}`)
  await openssl(
    "x509",
    "-req",
    "-in",
    `${int}.csr`,
    "-CA",
    `${root}.pem`,
    "-CAkey",
    `${root}.key`,
    "-CAcreateserial",
    "-days",
    "20",
    "-extfile",
    join(dir, "ext.cnf"),
    "-out",
    `${int}.pem`,
  )
  const text = (p: string) => readFile(p, "utf8")
  const rootPem = await text(`${root}.pem`)
  const certPem = await text(`${int}.pem`)
  return {
    "ca-cert.pem": certPem,
    "ca-key.pem": await text(`${int}.key`),
    "cert-chain.pem": certPem + rootPem,
    "root-cert.pem": rootPem,
  }
}

export const base64 = (data: Record<string, string>) =>
  Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString("base64")]))
