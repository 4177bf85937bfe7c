import type { Plugin } from "esbuild"

/** The esbuild plugin that bundles a stand-in for undici (see build-lazy-undici.mjs). */
export declare const lazyUndici: (root: string) => Plugin
