export * from "./config-store.js"
export * from "./memory.js"
export * from "./snapshot.js"
