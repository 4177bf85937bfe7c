/**
 * install-cni's settings from its environment: the whole table is the slice (the installer is
 * one subsystem), so providing `InstallCniConfig.layerFromEnv()` is both the start-up check that
 * reports every bad variable and the one read of the environment.
 */
import { cniEnv } from "./cni-env.js"
import { EnvConfig } from "./env-config.js"

type CniVariable = keyof typeof cniEnv & string

export class InstallCniConfig extends EnvConfig<InstallCniConfig>()("mesh/InstallCniConfig", {
  table: cniEnv,
  names: Object.keys(cniEnv) as ReadonlyArray<CniVariable>,
  fields: {},
}) {}
