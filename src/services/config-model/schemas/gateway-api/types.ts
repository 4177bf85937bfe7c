/**
 * The Gateway-API kinds (`gateway.networking.k8s.io`) as the mesh reads them: the decoded spec
 * of each. Field names are the upstream API's; only what the conversion to the mesh's own
 * Gateway and VirtualService model reads, or what validation must see, is typed. The schemas
 * beside this file decode to these types; `services/gateway-api/` converts them.
 */

/** A reference to a parent (Gateway, or a Service for mesh routes) of a route. */
export interface ParentReference {
  readonly group?: string
  readonly kind?: string
  readonly namespace?: string
  readonly name: string
  readonly sectionName?: string
  readonly port?: number
}

/** A backend of a route rule: a Service (default) or a ServiceEntry host. */
export interface BackendRef {
  readonly group?: string
  readonly kind?: string
  readonly name: string
  readonly namespace?: string
  readonly port?: number
  readonly weight?: number
  readonly filters?: ReadonlyArray<HTTPRouteFilter>
}

export interface GatewayClassSpec {
  readonly controllerName: string
  readonly description?: string
  readonly parametersRef?: {
    readonly group: string
    readonly kind: string
    readonly name: string
    readonly namespace?: string
  }
}

export interface SecretObjectReference {
  readonly group?: string
  readonly kind?: string
  readonly name: string
  readonly namespace?: string
}

export interface GatewayTLSConfig {
  readonly mode?: "Terminate" | "Passthrough"
  readonly certificateRefs?: ReadonlyArray<SecretObjectReference>
  readonly options?: Readonly<Record<string, string>>
  /** Client certificate validation (v1.1+ `frontendValidation`). */
  readonly frontendValidation?: {
    readonly caCertificateRefs?: ReadonlyArray<SecretObjectReference>
  }
}

export interface RouteGroupKind {
  readonly group?: string
  readonly kind: string
}

export interface AllowedRoutes {
  readonly namespaces?: {
    readonly from?: "All" | "Same" | "Selector"
    readonly selector?: LabelSelector
  }
  readonly kinds?: ReadonlyArray<RouteGroupKind>
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>>
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string
    readonly operator: "In" | "NotIn" | "Exists" | "DoesNotExist"
    readonly values?: ReadonlyArray<string>
  }>
}

export interface Listener {
  readonly name: string
  readonly hostname?: string
  readonly port: number
  readonly protocol: string
  readonly tls?: GatewayTLSConfig
  readonly allowedRoutes?: AllowedRoutes
}

export interface GatewayAddress {
  readonly type?: "IPAddress" | "Hostname" | "NamedAddress" | string
  readonly value: string
}

export interface KubernetesGatewaySpec {
  readonly gatewayClassName: string
  readonly listeners: ReadonlyArray<Listener>
  readonly addresses?: ReadonlyArray<GatewayAddress>
  /** Which namespaces' ListenerSets may attach listeners; not set: none. */
  readonly allowedListeners?: {
    readonly namespaces?: { readonly from?: "All" | "Same" | "Selector" | "None"; readonly selector?: LabelSelector }
  }
  readonly infrastructure?: {
    readonly labels?: Readonly<Record<string, string>>
    readonly annotations?: Readonly<Record<string, string>>
    /** Gateway-specific parameters: a ConfigMap of the Gateway's namespace (group "", kind ConfigMap). */
    readonly parametersRef?: { readonly group: string; readonly kind: string; readonly name: string }
  }
}

export interface HTTPHeaderMatch {
  readonly type?: "Exact" | "RegularExpression"
  readonly name: string
  readonly value: string
}

export interface HTTPQueryParamMatch {
  readonly type?: "Exact" | "RegularExpression"
  readonly name: string
  readonly value: string
}

export interface HTTPRouteMatch {
  readonly path?: { readonly type?: "Exact" | "PathPrefix" | "RegularExpression"; readonly value?: string }
  readonly headers?: ReadonlyArray<HTTPHeaderMatch>
  readonly queryParams?: ReadonlyArray<HTTPQueryParamMatch>
  readonly method?: string
}

export interface HTTPHeader {
  readonly name: string
  readonly value: string
}

export interface HTTPHeaderFilter {
  readonly set?: ReadonlyArray<HTTPHeader>
  readonly add?: ReadonlyArray<HTTPHeader>
  readonly remove?: ReadonlyArray<string>
}

export interface HTTPPathModifier {
  readonly type: "ReplaceFullPath" | "ReplacePrefixMatch"
  readonly replaceFullPath?: string
  readonly replacePrefixMatch?: string
}

export interface HTTPRouteFilter {
  readonly type:
    | "RequestHeaderModifier"
    | "ResponseHeaderModifier"
    | "RequestMirror"
    | "RequestRedirect"
    | "URLRewrite"
    | "ExtensionRef"
    | "CORS"
  readonly requestHeaderModifier?: HTTPHeaderFilter
  readonly responseHeaderModifier?: HTTPHeaderFilter
  readonly requestMirror?: {
    readonly backendRef: BackendRef
    readonly percent?: number
    readonly fraction?: { readonly numerator: number; readonly denominator?: number }
  }
  readonly requestRedirect?: {
    readonly scheme?: "http" | "https"
    readonly hostname?: string
    readonly path?: HTTPPathModifier
    readonly port?: number
    readonly statusCode?: number
  }
  readonly urlRewrite?: { readonly hostname?: string; readonly path?: HTTPPathModifier }
  readonly extensionRef?: { readonly group: string; readonly kind: string; readonly name: string }
  /** Kept opaque by the schema (experimental upstream); read defensively by the conversion. */
  readonly cors?: HTTPCORSFilter
}

export interface HTTPCORSFilter {
  readonly allowOrigins?: ReadonlyArray<string>
  readonly allowCredentials?: boolean
  readonly allowMethods?: ReadonlyArray<string>
  readonly allowHeaders?: ReadonlyArray<string>
  readonly exposeHeaders?: ReadonlyArray<string>
  readonly maxAge?: number
}

export interface HTTPRouteRule {
  readonly name?: string
  readonly matches?: ReadonlyArray<HTTPRouteMatch>
  readonly filters?: ReadonlyArray<HTTPRouteFilter>
  readonly backendRefs?: ReadonlyArray<BackendRef>
  readonly timeouts?: { readonly request?: string; readonly backendRequest?: string }
  readonly retry?: { readonly codes?: ReadonlyArray<number>; readonly attempts?: number; readonly backoff?: string }
}

export interface HTTPRouteSpec {
  readonly parentRefs?: ReadonlyArray<ParentReference>
  readonly hostnames?: ReadonlyArray<string>
  readonly rules?: ReadonlyArray<HTTPRouteRule>
}

export interface GRPCRouteMatch {
  readonly method?: {
    readonly type?: "Exact" | "RegularExpression"
    readonly service?: string
    readonly method?: string
  }
  readonly headers?: ReadonlyArray<HTTPHeaderMatch>
}

export interface GRPCRouteRule {
  readonly name?: string
  readonly matches?: ReadonlyArray<GRPCRouteMatch>
  readonly filters?: ReadonlyArray<HTTPRouteFilter>
  readonly backendRefs?: ReadonlyArray<BackendRef>
}

export interface GRPCRouteSpec {
  readonly parentRefs?: ReadonlyArray<ParentReference>
  readonly hostnames?: ReadonlyArray<string>
  readonly rules?: ReadonlyArray<GRPCRouteRule>
}

export interface TCPRouteSpec {
  readonly parentRefs?: ReadonlyArray<ParentReference>
  readonly rules: ReadonlyArray<{ readonly name?: string; readonly backendRefs?: ReadonlyArray<BackendRef> }>
}

export interface TLSRouteSpec {
  readonly parentRefs?: ReadonlyArray<ParentReference>
  readonly hostnames?: ReadonlyArray<string>
  readonly rules: ReadonlyArray<{ readonly name?: string; readonly backendRefs?: ReadonlyArray<BackendRef> }>
}

export interface ReferenceGrantSpec {
  readonly from: ReadonlyArray<{ readonly group: string; readonly kind: string; readonly namespace: string }>
  readonly to: ReadonlyArray<{ readonly group: string; readonly kind: string; readonly name?: string }>
}

/** A ListenerSet's listener: a Gateway listener whose port may be left out (HTTP 80, HTTPS 443). */
export type ListenerEntry = Omit<Listener, "port"> & { readonly port?: number }

/** ListenerSet (v1) and XListenerSet (x-k8s v1alpha1): listeners attached to a parent Gateway. */
export interface ListenerSetSpec {
  readonly parentRef: {
    readonly group?: string
    readonly kind?: string
    readonly namespace?: string
    readonly name: string
  }
  readonly listeners: ReadonlyArray<ListenerEntry>
}
