import { availableParallelism } from "node:os"
import { configDefaults, defineConfig } from "vitest/config"

/**
 * Two projects, because importing Effect and the mesh's modules afresh for every file costs far
 * more than most unit tests themselves:
 * - `unit` (test/services: pure logic, no sockets, files or process-wide state) runs in one
 *   worker thread that keeps its module cache between files;
 * - `process` (everything else: servers, timers, child processes, process.env) keeps one fresh
 *   process per file, two at a time, since most of their time is spent waiting on processes.
 */

/**
 * Unit tests that need a fresh process: grpc-inbound sets GRPC_XDS_EXPERIMENTAL_RBAC before
 * @grpc/grpc-js-xds reads it at load, which a shared module cache would make order-dependent.
 */
const OWN_PROCESS = ["test/services/xds/grpcgen/grpc-inbound.test.ts"]
/** `grpc-inbound` for `test/services/xds/grpcgen/grpc-inbound.test.ts`. */
const testName = (path: string): string => path.slice(path.lastIndexOf("/") + 1, -".test.ts".length)

const shared = {
  // End-to-end tests start real processes; keep a generous per-test ceiling but never sleep in tests.
  testTimeout: 60_000,
  hookTimeout: 60_000,
}

export default defineConfig({
  test: {
    ...shared,
    // Each pool reads its limits and whether to recycle workers from here, each worker whether to
    // reset modules between files from its project; the two pools run side by side.
    poolOptions: {
      threads: { isolate: false, minThreads: 1, maxThreads: 1 },
      // Vitest's default is one fork per CPU but one, so a single fork on 2 CPUs; these files
      // mostly wait on child processes and timers, so two share 2 CPUs well.
      forks: { minForks: 2, maxForks: Math.max(2, availableParallelism() - 1) },
    },
    // Only here: projects do not inherit it, so the build runs once per `vitest run`.
    globalSetup: ["test/global-setup.ts"],
    projects: [
      {
        test: {
          ...shared,
          name: "unit",
          include: ["test/services/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...OWN_PROCESS],
          pool: "threads",
          poolOptions: { threads: { isolate: false } },
        },
      },
      {
        test: {
          ...shared,
          name: "process",
          include: ["test/**/*.test.ts"],
          // the unit project's files (an extglob: a pattern naming directories would skip them whole)
          exclude: [...configDefaults.exclude, `test/services/**/!(${OWN_PROCESS.map(testName).join("|")}).test.ts`],
          pool: "forks",
        },
      },
    ],
  },
})
