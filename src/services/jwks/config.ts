/** The JWKS resolver's slice of the `mesh-discovery` environment. */
import { discoveryEnv } from "../config/discovery-env.js"
import { EnvConfig } from "../config/env-config.js"

export class JwksConfig extends EnvConfig<JwksConfig>()("mesh/JwksConfig", {
  table: discoveryEnv,
  names: ["PILOT_JWT_ENABLE_REMOTE_JWKS", "PILOT_JWT_PUB_KEY_REFRESH_INTERVAL", "JWKS_RESOLVER_INSECURE_SKIP_VERIFY"],
  fields: {},
}) {}
