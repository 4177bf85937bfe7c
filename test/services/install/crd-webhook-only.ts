/**
 * Invalid corpus documents the generated CRD schemas accept, each with the reason; the `/validate`
 * webhook refuses them (crd-corpus.test.ts checks both). Most cannot be said in a structural
 * schema at all (rules across list items or on property names, sums, primality, regular-expression
 * and URL validity, a duration's magnitude). Those marked `conditional` could be spelled as
 * anyOf/not chains over enum values, but their conditions mix defaults, several enum values and
 * fields at other levels; a hand-written chain there risks refusing what the webhook accepts.
 */
export const WEBHOOK_ONLY: Readonly<Record<string, string>> = {
  "AuthorizationPolicy/invalid/path-template-after-match-any.yaml":
    "path-template grammar (where {*} and {**} may stand) is checked by validation; the reference's CRD does not state it either",
  "AuthorizationPolicy/invalid/path-template-glob-literal.yaml":
    "path-template grammar (segments beside a template must be literals) is checked by validation, as in the reference",
  "AuthorizationPolicy/invalid/path-template-unknown-brace.yaml":
    "path-template grammar (only {*} and {**} between braces) is checked by validation, as in the reference",
  "DestinationRule/invalid/http2-keepalive-no-timeout.yaml":
    "the reference's CRD leaves http2KeepAlive.timeout optional; validation requires it beside interval",
  "EnvoyFilter/invalid/waypoint-without-context.yaml":
    "conditional: match.waypoint only with context WAYPOINT is a rule across two fields (the reference states it in CEL)",
  "DestinationRule/invalid/export-mixed.yaml": "'*' beside other exportTo entries is a rule across list items",
  "DestinationRule/invalid/maglev-not-prime.yaml": "primality is not a structural-schema rule",
  "DestinationRule/invalid/mutual-no-cert.yaml":
    "conditional: MUTUAL needs certificate and key unless a credentialName is set, with defaults involved: left to the webhook",
  "EnvoyFilter/invalid/cluster-listener-match.yaml":
    "conditional: which match kind is allowed depends on applyTo's value: conditional across many enum values",
  "EnvoyFilter/invalid/filter-no-name.yaml": "conditional: a filter match needs a name: rule of the patch context",
  "EnvoyFilter/invalid/listener-class-cluster-match.yaml":
    "conditional: which match kind is allowed depends on applyTo's value: conditional across many enum values",
  "EnvoyFilter/invalid/proxy-version-regex.yaml": "regular-expression validity is not a structural-schema rule",
  "EnvoyFilter/invalid/subfilter-network.yaml":
    "conditional: subFilter is allowed for applyTo HTTP_FILTER only: conditional across levels",
  "Gateway/invalid/duplicate-port-names.yaml":
    "uniqueness of a nested field across servers[] is not a structural-schema rule",
  "Gateway/invalid/simple-no-cert.yaml":
    "conditional: SIMPLE needs credentialName or certificate and key, with defaults involved: left to the webhook",
  "PeerAuthentication/invalid/port-too-big.yaml":
    "the ports are map keys: a structural schema cannot constrain property names",
  "PeerAuthentication/invalid/port-zero.yaml":
    "the ports are map keys: a structural schema cannot constrain property names",
  "PeerAuthentication/invalid/wildcard-key.yaml":
    "selector label keys: a structural schema cannot constrain property names",
  "ProxyConfig/invalid/selector-label-key.yaml":
    "selector label keys: a structural schema cannot constrain property names",
  "RequestAuthentication/invalid/jwks-uri-scheme.yaml":
    "the URL is read by the WHATWG parser, which takes spellings (white space, `https:host`) a scheme pattern would refuse",
  "RequestAuthentication/invalid/timeout-too-small.yaml":
    "at least 1ms at ms precision: the pattern states the duration grammar, not its magnitude",
  "ServiceEntry/invalid/dns-wildcard.yaml":
    "conditional: wildcard hosts refused only for DNS resolution without endpoints: conditional on a defaulted field and a list",
  "ServiceEntry/invalid/duplicate-port-number.yaml":
    "port numbers unique: a second key of one list; a list-map has one compound key",
  "VirtualService/invalid/bad-regex.yaml": "regular-expression validity is not a structural-schema rule",
  "VirtualService/invalid/weights-90.yaml": "a sum across list items is not a structural-schema rule",
  "WasmPlugin/invalid/ftp-url.yaml":
    "the URL is read by the WHATWG parser (bare references allowed, scheme case-folded): a pattern would not match it exactly",
  "WorkloadEntry/invalid/label-key.yaml": "label keys: a structural schema cannot constrain property names",
  "WorkloadEntry/invalid/port-name.yaml": "ports is a map keyed by port name: property names cannot be constrained",
  "WorkloadEntry/invalid/port-range.yaml":
    "ports map values: the fields are shared with ServiceEntry endpoints, where the range is checked only for some resolutions",
  "WorkloadGroup/invalid/template-port.yaml":
    "ports map values: the fields are shared with ServiceEntry endpoints, where the range is checked only for some resolutions",
}
