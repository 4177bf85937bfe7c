/**
 * Errors of the certificate authority. Every refusal of a CreateCertificate request becomes a
 * `CaRefusal`: a gRPC status code, a message for the caller and the metric that counts it.
 */
import { Data } from "effect"
import type { NodeRefusalKind } from "./identity.js"

/** gRPC status codes used by the CA (numbers as in the gRPC spec; no grpc import in services). */
export const GrpcCode = {
  INVALID_ARGUMENT: 3,
  PERMISSION_DENIED: 7,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const
export type GrpcCode = (typeof GrpcCode)[keyof typeof GrpcCode]

/** Error kinds of signing, named as the reference's CA error types (label `error_type`). */
export type SignErrorType = "CA_NOT_READY" | "CSR_ERROR" | "TTL_ERROR" | "CERT_GEN_ERROR" | "CA_ILLEGAL_CONFIG"

/** The CSR could not be parsed, its signature does not verify, or its key is not allowed. */
export class CsrError extends Data.TaggedError("CsrError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** A signing failure; `type` says which (TTL refused, CA not ready, generation failed, ...). */
export class SignError extends Data.TaggedError("SignError")<{
  readonly type: SignErrorType
  readonly reason: string
}> {
  override get message() {
    return this.reason
  }
}

/** Authentication failed; `reason` joins what each authenticator said. */
export class AuthenticationError extends Data.TaggedError("AuthenticationError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** The CA key material could not be loaded (incomplete or inconsistent bundle, unreadable files). */
export class CaMaterialError extends Data.TaggedError("CaMaterialError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** The CA settings from flags and environment are invalid (e.g. a malformed `JWT_RULE`). */
export class CaConfigError extends Data.TaggedError("CaConfigError")<{ readonly reason: string }> {
  override get message() {
    return this.reason
  }
}

/** Which `meshca_server_*` counter a refusal increments. */
export type RefusalMetric = "authentication_failure" | "csr_parsing_err" | "id_extraction_err" | "csr_sign_err"

/** A refused CreateCertificate call, as the gRPC layer reports it. */
export class CaRefusal extends Data.TaggedError("CaRefusal")<{
  readonly code: GrpcCode
  readonly reason: string
  readonly metric: RefusalMetric
  /** For `csr_sign_err`: the reference's error type label. */
  readonly errorType?: SignErrorType
  /** A refused impersonation (node authorization): why, for its own counter. */
  readonly nodeRefusal?: NodeRefusalKind
}> {
  override get message() {
    return this.reason
  }
}

/** The gRPC status of a signing error, as the reference maps its CA error types. */
export const signErrorCode = (type: SignErrorType): GrpcCode =>
  type === "CSR_ERROR" || type === "TTL_ERROR" ? GrpcCode.INVALID_ARGUMENT : GrpcCode.INTERNAL
