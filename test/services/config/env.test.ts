import { describe, expect, it } from "@effect/vitest"
import { type Config, ConfigError, ConfigProvider, Duration, Effect, Either } from "effect"
import { agentEnv } from "../../../src/services/config/agent-env.js"
import { envTables } from "../../../src/services/config/binaries-env.js"
import { cniEnv } from "../../../src/services/config/cni-env.js"
import { discoveryEnv } from "../../../src/services/config/discovery-env.js"
import { type EnvTable, env, envTableConfig, envVarConfig, parseEnvValue } from "../../../src/services/config/env.js"
import { tuningEnv } from "../../../src/services/config/tuning-env.js"

/** Runs a Config against a fixed environment. */
const load = <A>(config: Config.Config<A>, vars: Record<string, string> = {}) =>
  Effect.withConfigProvider(config, ConfigProvider.fromMap(new Map(Object.entries(vars))))

/** Every leaf message of a ConfigError (And / Or nodes flattened). */
const messages = (error: ConfigError.ConfigError): Array<string> =>
  ConfigError.reduceWithContext(error, undefined, {
    andCase: (_, left: Array<string>, right: Array<string>) => [...left, ...right],
    orCase: (_, left: Array<string>, right: Array<string>) => [...left, ...right],
    invalidDataCase: (_, __, message) => [message],
    missingDataCase: (_, __, message) => [message],
    sourceUnavailableCase: (_, __, message) => [message],
    unsupportedCase: (_, __, message) => [message],
  })

const right = <A>(either: Either.Either<A, string>): A => Either.getOrThrowWith(either, (reason) => new Error(reason))

describe("parseEnvValue", () => {
  it("B accepts every word of Go's strconv.ParseBool", () => {
    for (const word of ["1", "t", "T", "true", "TRUE", "True"]) expect(right(parseEnvValue("B", word))).toBe(true)
    for (const word of ["0", "f", "F", "false", "FALSE", "False"]) expect(right(parseEnvValue("B", word))).toBe(false)
  })

  it("B rejects any other word", () => {
    for (const word of ["yes", "no", "on", "tRuE", "2", ""]) {
      const result = parseEnvValue("B", word)
      expect(Either.isLeft(result), word).toBe(true)
    }
    expect(parseEnvValue("B", "yes")).toEqual(Either.left('expected a boolean (true or false), got "yes"'))
  })

  it("I accepts signed decimal integers and nothing else", () => {
    expect(right(parseEnvValue("I", "4194304"))).toBe(4194304)
    expect(right(parseEnvValue("I", "-7"))).toBe(-7)
    expect(right(parseEnvValue("I", "+3"))).toBe(3)
    expect(right(parseEnvValue("I", "0"))).toBe(0)
    for (const bad of ["4.2", "abc", "1e3", "0x10", "", "12abc"]) {
      expect(Either.isLeft(parseEnvValue("I", bad)), bad).toBe(true)
    }
    expect(parseEnvValue("I", "abc")).toEqual(Either.left('expected an integer, got "abc"'))
  })

  it("F accepts decimal and exponent forms", () => {
    expect(right(parseEnvValue("F", "1"))).toBe(1)
    expect(right(parseEnvValue("F", "0.01"))).toBe(0.01)
    expect(right(parseEnvValue("F", "-2.5"))).toBe(-2.5)
    expect(right(parseEnvValue("F", "1e3"))).toBe(1000)
    for (const bad of ["abc", "", "1.2.3", "Infinity", "NaN"]) {
      expect(Either.isLeft(parseEnvValue("F", bad)), bad).toBe(true)
    }
  })

  it("S keeps the text as it is", () => {
    expect(right(parseEnvValue("S", "mesh.io/draining"))).toBe("mesh.io/draining")
    expect(right(parseEnvValue("S", " a,b "))).toBe(" a,b ")
    expect(right(parseEnvValue("S", ""))).toBe("")
  })

  it("D accepts Go durations and rejects the rest", () => {
    expect(Duration.toMillis(right(parseEnvValue("D", "100ms")))).toBe(100)
    expect(Duration.toHours(right(parseEnvValue("D", "1h0m0s")))).toBe(1)
    expect(Duration.toMillis(right(parseEnvValue("D", "1.5s")))).toBe(1500)
    expect(Duration.unsafeToNanos(right(parseEnvValue("D", "2562047h47m16.854775807s")))).toBe(
      9_223_372_036_854_775_807n,
    )
    for (const bad of ["soon", "10", "1x", ""]) {
      expect(Either.isLeft(parseEnvValue("D", bad)), bad).toBe(true)
    }
    expect(parseEnvValue("D", "soon")).toEqual(
      Either.left('expected a duration such as 100ms, 30s or 1h0m0s, got "soon"'),
    )
  })
})

describe("envVarConfig", () => {
  it.effect("reads the environment's value", () =>
    Effect.gen(function* () {
      const value = yield* load(envVarConfig("PILOT_DEBOUNCE_AFTER", discoveryEnv.PILOT_DEBOUNCE_AFTER), {
        PILOT_DEBOUNCE_AFTER: "250ms",
      })
      expect(Duration.toMillis(value)).toBe(250)
    }),
  )

  it.effect("uses the default when the variable is unset or empty", () =>
    Effect.gen(function* () {
      const config = envVarConfig("PILOT_DEBOUNCE_AFTER", discoveryEnv.PILOT_DEBOUNCE_AFTER)
      expect(Duration.toMillis(yield* load(config))).toBe(100)
      expect(Duration.toMillis(yield* load(config, { PILOT_DEBOUNCE_AFTER: "" }))).toBe(100)
      const enabled = envVarConfig("ENABLE_CA_SERVER", discoveryEnv.ENABLE_CA_SERVER)
      expect(yield* load(enabled)).toBe(true)
      expect(yield* load(enabled, { ENABLE_CA_SERVER: "" })).toBe(true)
      expect(yield* load(enabled, { ENABLE_CA_SERVER: "false" })).toBe(false)
    }),
  )

  it.effect("gives a zero value when there is no default", () =>
    Effect.gen(function* () {
      const table = {
        A_BOOL: env.bool("", "no default"),
        AN_INT: env.int("", "no default"),
        A_FLOAT: env.float("", "no default"),
        A_DURATION: env.duration("", "no default"),
        A_STRING: env.string("", "no default"),
      } as const satisfies EnvTable
      const values = yield* load(envTableConfig(table))
      expect(values.A_BOOL).toBe(false)
      expect(values.AN_INT).toBe(0)
      expect(values.A_FLOAT).toBe(0)
      expect(Duration.equals(values.A_DURATION, Duration.zero)).toBe(true)
      expect(values.A_STRING).toBe("")
    }),
  )

  it.effect("fails on a bad value with a ConfigError naming the variable and the expected type", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        load(envVarConfig("PILOT_DEBOUNCE_AFTER", discoveryEnv.PILOT_DEBOUNCE_AFTER), {
          PILOT_DEBOUNCE_AFTER: "soon",
        }),
      )
      expect(ConfigError.isConfigError(error)).toBe(true)
      expect(ConfigError.isInvalidData(error)).toBe(true)
      expect(messages(error)).toEqual([
        'environment variable PILOT_DEBOUNCE_AFTER: expected a duration such as 100ms, 30s or 1h0m0s, got "soon"',
      ])
    }),
  )
})

describe("envTableConfig", () => {
  it.effect("loads a whole table with environment values and defaults", () =>
    Effect.gen(function* () {
      const values = yield* load(envTableConfig(discoveryEnv), {
        PILOT_DEBOUNCE_AFTER: "1s",
        PILOT_PUSH_THROTTLE: "8",
        PILOT_TRACE_SAMPLING: "0.5",
        XDS_AUTH: "F",
        CLUSTER_ID: "east",
      })
      expect(Duration.toSeconds(values.PILOT_DEBOUNCE_AFTER)).toBe(1)
      expect(values.PILOT_PUSH_THROTTLE).toBe(8)
      expect(values.PILOT_TRACE_SAMPLING).toBe(0.5)
      expect(values.XDS_AUTH).toBe(false)
      expect(values.CLUSTER_ID).toBe("east")
      expect(Duration.toSeconds(values.PILOT_DEBOUNCE_MAX)).toBe(10)
      expect(values.POD_NAMESPACE).toBe("mesh-system")
    }),
  )

  it.effect("reports every bad variable, not just the first", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(
        load(envTableConfig(discoveryEnv), {
          PILOT_DEBOUNCE_AFTER: "soon",
          PILOT_PUSH_THROTTLE: "many",
          XDS_AUTH: "yes",
          PILOT_TRACE_SAMPLING: "half",
          PILOT_DEBOUNCE_MAX: "20s",
        }),
      )
      const reported = messages(error)
      expect(reported).toHaveLength(4)
      const joined = reported.join("\n")
      expect(joined).toContain('PILOT_DEBOUNCE_AFTER: expected a duration such as 100ms, 30s or 1h0m0s, got "soon"')
      expect(joined).toContain('PILOT_PUSH_THROTTLE: expected an integer, got "many"')
      expect(joined).toContain('XDS_AUTH: expected a boolean (true or false), got "yes"')
      expect(joined).toContain('PILOT_TRACE_SAMPLING: expected a number, got "half"')
      expect(joined).not.toContain("PILOT_DEBOUNCE_MAX")
    }),
  )

  for (const [binary, table] of Object.entries(envTables)) {
    it.effect(`${binary}: every default parses (empty environment)`, () =>
      Effect.gen(function* () {
        const values: Record<string, unknown> = yield* load(envTableConfig(table))
        expect(Object.keys(values).sort()).toEqual(Object.keys(table).sort())
      }),
    )

    it(`${binary}: every variable has a description and a known type`, () => {
      for (const [name, spec] of Object.entries(table as EnvTable)) {
        expect(name).toMatch(/^[A-Z][A-Z0-9_]*$/)
        expect(["B", "S", "I", "D", "F"]).toContain(spec.type)
        expect(spec.description.length, name).toBeGreaterThan(0)
        if (spec.default !== "") expect(Either.isRight(parseEnvValue(spec.type, spec.default)), name).toBe(true)
      }
    })
  }
})

describe("discovery table", () => {
  it("holds the spec's types and defaults", () => {
    expect(discoveryEnv.PILOT_DEBOUNCE_AFTER).toMatchObject({ type: "D", default: "100ms" })
    expect(discoveryEnv.PILOT_DEBOUNCE_MAX).toMatchObject({ type: "D", default: "10s" })
    expect(discoveryEnv.MESH_GPRC_MAXRECVMSGSIZE).toMatchObject({ type: "I", default: "4194304" })
    expect(discoveryEnv.PILOT_TRACE_SAMPLING).toMatchObject({ type: "F", default: "1" })
    expect(discoveryEnv.DEFAULT_WORKLOAD_CERT_TTL).toMatchObject({ type: "D", default: "24h0m0s" })
    expect(discoveryEnv.MESHCA_SELF_SIGNED_CA_CERT_TTL).toMatchObject({ type: "D", default: "87600h0m0s" })
    expect(discoveryEnv.PILOT_CERT_PROVIDER).toMatchObject({ type: "S", default: "meshd" })
    expect(discoveryEnv.PILOT_JWT_ENABLE_REMOTE_JWKS).toMatchObject({ type: "S", default: "false" })
    expect(discoveryEnv.CLUSTER_ID).toMatchObject({ type: "S", default: "Orchestrator" })
    expect(discoveryEnv.PILOT_DRAINING_LABEL).toMatchObject({ type: "S", default: "mesh.io/draining" })
    expect(discoveryEnv.PILOT_ENABLE_AMBIENT).toMatchObject({ type: "B", default: "false" })
    expect(discoveryEnv.AUDIENCE).toMatchObject({ type: "S", default: "" })
    expect(discoveryEnv).not.toHaveProperty("PILOT_CA_CERT_CONFIGMAP")
  })

  it.effect("loads the defaults as typed values", () =>
    Effect.gen(function* () {
      const values = yield* load(envTableConfig(discoveryEnv))
      expect(Duration.toMillis(values.PILOT_DEBOUNCE_AFTER)).toBe(100)
      expect(values.MESH_GPRC_MAXRECVMSGSIZE).toBe(4194304)
      expect(values.PILOT_TRACE_SAMPLING).toBe(1)
      expect(Duration.toHours(values.DEFAULT_WORKLOAD_CERT_TTL)).toBe(24)
      expect(values.ENABLE_CA_SERVER).toBe(true)
      expect(values.PILOT_GATEWAY_API_CONTROLLER_NAME).toBe("mesh.io/gateway-controller")
    }),
  )
})

describe("tuning group, agent and install-cni tables", () => {
  it("the tuning group reuses discovery's definitions", () => {
    for (const [name, spec] of Object.entries(tuningEnv)) {
      expect(spec).toBe(discoveryEnv[name as keyof typeof discoveryEnv])
    }
    for (const name of ["CLUSTER_ID", "CLOUD_PLATFORM", "COMPLIANCE_POLICY", "PILOT_CERT_PROVIDER", "MCS_API_GROUP"]) {
      expect(tuningEnv).toHaveProperty(name)
    }
    expect(tuningEnv).toHaveProperty("ENABLE_AUTO_SNI")
    expect(tuningEnv).toHaveProperty("UNSAFE_ENABLE_ADMIN_ENDPOINTS")
    expect(tuningEnv).toHaveProperty("MESH_DELTA_XDS")
    expect(tuningEnv).not.toHaveProperty("MESHCA_SELF_SIGNED_CA_CERT_TTL")
    expect(tuningEnv).not.toHaveProperty("ROOT_CA_DIR")
  })

  it("the agent has the tuning group and its own variables", () => {
    expect(agentEnv.CLUSTER_ID).toBe(discoveryEnv.CLUSTER_ID)
    expect(agentEnv.PILOT_DEBOUNCE_AFTER).toBe(discoveryEnv.PILOT_DEBOUNCE_AFTER)
    expect(agentEnv.XDS_AUTH).toMatchObject({ type: "B", default: "true" })
    expect(agentEnv.WASM_PURGE_INTERVAL).toMatchObject({ type: "D", default: "1h0m0s" })
    expect(agentEnv.PROXY_STATUS_PORT).toMatchObject({ type: "I", default: "15021" })
    expect(agentEnv.TRUST_DOMAIN).toMatchObject({ type: "S", default: "cluster.local" })
    expect(agentEnv).not.toHaveProperty("REPAIR_ENABLED")
  })

  it("install-cni has the tuning group, its own variables and the pqc compliance policy", () => {
    expect(cniEnv.CLUSTER_ID).toBe(discoveryEnv.CLUSTER_ID)
    expect(cniEnv.COMPLIANCE_POLICY).not.toBe(discoveryEnv.COMPLIANCE_POLICY)
    expect(cniEnv.COMPLIANCE_POLICY.description).toContain("pqc")
    expect(cniEnv.REPAIR_BROKEN_POD_LABEL_KEY).toMatchObject({ type: "S", default: "cni.mesh.io/uninitialized" })
    expect(cniEnv.ORCHCONFIG_MODE).toMatchObject({ type: "I", default: "384" })
    expect(cniEnv.PILOT_CA_CERT_CONFIGMAP).toMatchObject({ type: "S", default: "mesh-ca-root-cert" })
    expect(cniEnv).not.toHaveProperty("WASM_PURGE_INTERVAL")
  })

  it.effect("install-cni reads its own variables", () =>
    Effect.gen(function* () {
      const values = yield* load(envTableConfig(cniEnv), { REPAIR_DELETE_PODS: "true", COMPLIANCE_POLICY: "pqc" })
      expect(values.REPAIR_DELETE_PODS).toBe(true)
      expect(values.REPAIR_ENABLED).toBe(true)
      expect(values.COMPLIANCE_POLICY).toBe("pqc")
      expect(values.MONITORING_PORT).toBe(15014)
    }),
  )
})
