import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/global-setup.ts"],
    // End-to-end tests start real processes; keep a generous per-test ceiling but never sleep in tests.
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
  },
})
