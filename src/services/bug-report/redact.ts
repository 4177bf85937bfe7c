/**
 * Secrets in a bug report (spec part 3 §5 rule 4): listed with their names, types and keys, the
 * values replaced unless `--full-secrets` is set.
 */

export const REDACTED = "<REDACTED>"

interface SecretLike {
  readonly data?: Readonly<Record<string, string>>
  readonly stringData?: Readonly<Record<string, string>>
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> }
}

const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

const redactValues = (values: Readonly<Record<string, string>> | undefined) =>
  values === undefined ? undefined : Object.fromEntries(Object.keys(values).map((k) => [k, REDACTED]))

/** The secret as the archive holds it: values redacted (also in the last-applied annotation) unless `full`. */
export const redactSecret = <S extends SecretLike>(secret: S, full: boolean): S => {
  if (full) return secret
  const annotations = secret.metadata?.annotations
  const data = redactValues(secret.data)
  const stringData = redactValues(secret.stringData)
  return {
    ...secret,
    ...(data !== undefined ? { data } : {}),
    ...(stringData !== undefined ? { stringData } : {}),
    ...(secret.metadata !== undefined && annotations?.[LAST_APPLIED] !== undefined
      ? { metadata: { ...secret.metadata, annotations: { ...annotations, [LAST_APPLIED]: REDACTED } } }
      : {}),
  }
}
