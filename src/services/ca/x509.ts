/**
 * The one entry point to @peculiar/x509 for the CA: the library needs `reflect-metadata`
 * loaded before it and a WebCrypto provider, here Node's own (OpenSSL underneath).
 */
import "reflect-metadata"
import { webcrypto } from "node:crypto"
import * as x509 from "@peculiar/x509"

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0])

export { x509 }
export const subtle = webcrypto.subtle

/** The PEM blocks of a text, in order; `label` filters (e.g. "CERTIFICATE"). */
export const pemBlocks = (text: string, label?: string): ReadonlyArray<string> => {
  const blocks: Array<string> = []
  const re = /-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g
  for (const match of text.matchAll(re)) {
    if (label === undefined || match[1] === label) blocks.push(`${match[0]}\n`)
  }
  return blocks
}

/** Parses every certificate of a PEM text; throws on garbage. */
export const parseCertificates = (text: string): ReadonlyArray<x509.X509Certificate> =>
  pemBlocks(text, "CERTIFICATE").map((pem) => new x509.X509Certificate(pem))
