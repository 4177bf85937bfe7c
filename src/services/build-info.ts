/**
 * Build information of this binary. The values are stamped in by the build (scripts/build.mjs);
 * when the sources run unbundled (tests) they fall back to the package's development markers.
 */

declare const __MESH_VERSION__: string | undefined
declare const __MESH_GIT_REVISION__: string | undefined
declare const __MESH_BUILD_TIME__: string | undefined

export interface BuildInfo {
  readonly version: string
  readonly gitRevision: string
  readonly buildTime: string
  readonly nodeVersion: string
  readonly platform: string
  readonly buildStatus: string
}

const stamped = (value: string | undefined, fallback: string): string => value ?? fallback

export const buildInfo: BuildInfo = {
  version: stamped(typeof __MESH_VERSION__ === "string" ? __MESH_VERSION__ : undefined, "0.0.0-dev"),
  gitRevision: stamped(typeof __MESH_GIT_REVISION__ === "string" ? __MESH_GIT_REVISION__ : undefined, "unknown"),
  buildTime: stamped(typeof __MESH_BUILD_TIME__ === "string" ? __MESH_BUILD_TIME__ : undefined, "unknown"),
  nodeVersion: process.version,
  platform: `${process.platform}/${process.arch}`,
  buildStatus: typeof __MESH_VERSION__ === "string" ? "Clean" : "Modified",
}
