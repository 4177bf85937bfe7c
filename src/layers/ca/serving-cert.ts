/**
 * The server's own certificate from `CaConfig`, shared by the secure gRPC listener and the
 * HTTPS webhook listener: `--tlsCertFile`/`--tlsKeyFile` when given (`--caCertFile` adds
 * client-certificate roots), else per `PILOT_CERT_PROVIDER`; its TLS restrictions per
 * `--tls-cipher-suites` and `COMPLIANCE_POLICY`.
 */
import { Effect, Either, Layer, Stream } from "effect"
import { CertificateAuthority } from "../../services/ca/ca.js"
import { CaConfig, type CaConfigValues } from "../../services/ca/config.js"
import { CaConfigError } from "../../services/ca/errors.js"
import { trustBundlePem } from "../../services/ca/material.js"
import { caServerTls, serverDnsNames } from "../../services/ca/settings.js"
import type { SecureGrpcError, ServingCertSource } from "../secure-grpc/listener.js"
import { caIssuedCertSource, fileCertSource, ServingCert, shareServingCertSource } from "../secure-grpc/serving-cert.js"

/**
 * Where the certificate comes from: the files when given (whatever `PILOT_CERT_PROVIDER` says, as
 * the spec has it), else `meshd` → issued by the built-in CA; `custom` → mounted files in
 * `customCertsDir`; `kubernetes` / `k8s.io/NAME` → the orchestrator's signer, not available here
 * (an error); anything else (e.g. `none`) → no certificate, so no secure listener (undefined).
 */
export const servingCertSourceFromConfig = (
  config: Pick<
    CaConfigValues,
    | "PILOT_CERT_PROVIDER"
    | "MESHD_CUSTOM_HOST"
    | "REVISION"
    | "tlsCertFile"
    | "tlsKeyFile"
    | "caCertFile"
    | "namespace"
    | "customCertsDir"
  >,
): Either.Either<ServingCertSource<SecureGrpcError, CertificateAuthority> | undefined, string> => {
  const { tlsCertFile: certFile, tlsKeyFile: keyFile, caCertFile } = config
  // Client certificates from mesh proxies verify against the CA's roots as well as --caCertFile.
  const meshRoots = Stream.unwrap(Effect.map(CertificateAuthority, (ca) => Stream.map(ca.changes, trustBundlePem)))
  if (certFile !== "" || keyFile !== "") {
    if (certFile === "") return Either.left(`--tlsKeyFile=${keyFile} is given without --tlsCertFile`)
    if (keyFile === "") return Either.left(`--tlsCertFile=${certFile} is given without --tlsKeyFile`)
    return Either.right(fileCertSource({ certFile, keyFile, caCertFile }, { meshRoots }))
  }
  if (caCertFile !== "") return Either.left(`--caCertFile=${caCertFile} is given without --tlsCertFile/--tlsKeyFile`)
  const provider = config.PILOT_CERT_PROVIDER
  if (provider === "meshd" || provider === "istiod") {
    return Either.right(caIssuedCertSource(serverDnsNames(config, config.namespace)))
  }
  if (provider === "kubernetes" || provider.startsWith("k8s.io/")) {
    return Either.left(
      `PILOT_CERT_PROVIDER=${provider} needs the orchestrator's certificate signer, which is not supported without an orchestrator: use meshd, or --tlsCertFile/--tlsKeyFile`,
    )
  }
  if (provider === "custom") {
    const dir = config.customCertsDir.replace(/\/+$/, "")
    return Either.right(
      fileCertSource(
        { certFile: `${dir}/tls.crt`, keyFile: `${dir}/tls.key`, caCertFile: `${dir}/ca.crt` },
        { meshRoots },
      ),
    )
  }
  return Either.right(undefined)
}

/** `ServingCert` from `CaConfig`: the source run once and shared by every listener that serves it. */
export const layer: Layer.Layer<ServingCert, CaConfigError | SecureGrpcError, CaConfig | CertificateAuthority> =
  Layer.unwrapEffect(
    Effect.map(CaConfig, (config): Layer.Layer<ServingCert, CaConfigError | SecureGrpcError, CertificateAuthority> => {
      const tls = caServerTls(config.COMPLIANCE_POLICY, config.cipherSuites)
      if (Either.isLeft(tls)) return Layer.fail(new CaConfigError({ reason: tls.left }))
      const source = servingCertSourceFromConfig(config)
      if (Either.isLeft(source)) return Layer.fail(new CaConfigError({ reason: source.left }))
      const from = source.right
      if (from === undefined) return Layer.succeed(ServingCert, { source: undefined, tls: tls.right })
      return Layer.scoped(
        ServingCert,
        Effect.map(shareServingCertSource(from), (shared) => ({ source: shared, tls: tls.right })),
      )
    }),
  )
