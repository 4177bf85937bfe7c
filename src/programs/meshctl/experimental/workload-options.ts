/**
 * The options of `workload` and what its run file receives: shared by workload-command.ts (which
 * declares the command) and workload-run.ts (loaded only when it runs), so neither imports the other's types.
 */
import { type Command, Options } from "@effect/cli"
import { boolFlag, intFlag, listFlag, textFlag } from "../../shared/options.js"
import { globalOptions } from "../global-options.js"

export const groupOptions = {
  annotations: listFlag("annotations").pipe(
    Options.withAlias("a"),
    Options.withDescription("The annotations to apply to the workload instances; e.g. -a x=y,jk=lmn"),
  ),
  labels: listFlag("labels").pipe(
    Options.withAlias("l"),
    Options.withDescription("The labels to apply to the workload instances; e.g. -l env=prod,vers=2"),
  ),
  locality: textFlag("locality").pipe(Options.withDescription("The locality of the workloads")),
  name: textFlag("name").pipe(Options.withDescription("The name of the workload group")),
  network: textFlag("network").pipe(Options.withDescription("The network the workloads are in")),
  ports: listFlag("ports").pipe(
    Options.withAlias("p"),
    Options.withDescription("The incoming ports exposed by the workload instances; e.g. -p grpc=3550,http=8080"),
  ),
  serviceAccount: textFlag("serviceAccount", "default").pipe(
    Options.withAlias("s"),
    Options.withDescription("The service identity to associate with the workload instances"),
  ),
  weight: intFlag("weight", 0, { min: 0, max: 4294967295 }).pipe(
    Options.withAlias("w"),
    Options.withDescription("The weight of the workloads' endpoints in load balancing"),
  ),
  global: globalOptions,
}

export const entryOptions = {
  autoregister: boolFlag("autoregister").pipe(
    Options.withDescription(
      "Creates a WorkloadEntry upon connection to the control plane (if enabled in the control plane)",
    ),
  ),
  captureDns: boolFlag("capture-dns", true).pipe(
    Options.withDescription("Enables the capture of outgoing DNS packets on port 53, redirecting to the agent"),
  ),
  clusterID: textFlag("clusterID").pipe(
    Options.withDescription(
      "The ID used to identify the cluster (default: the orchestrator cluster name, Orchestrator)",
    ),
  ),
  externalIP: textFlag("externalIP").pipe(Options.withDescription("External IP address of the workload")),
  file: textFlag("file").pipe(
    Options.withAlias("f"),
    Options.withDescription("Filename of the WorkloadGroup artifact; empty reads it from the API server (--name, -n)"),
  ),
  ingressIP: textFlag("ingressIP").pipe(
    Options.withDescription("IP address of the gateway that reaches the control plane from the VM"),
  ),
  ingressService: textFlag("ingressService", "mesh-eastwestgateway").pipe(
    Options.withDescription(
      "Name of the gateway Service (<service>[.<namespace>]) whose load-balancer IP reaches the control plane",
    ),
  ),
  internalIP: textFlag("internalIP").pipe(Options.withDescription("Internal IP address of the workload")),
  name: textFlag("name").pipe(Options.withDescription("The name of the workload group")),
  output: textFlag("output").pipe(
    Options.withAlias("o"),
    Options.withDescription("Output directory for generated files"),
  ),
  revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
  tokenDuration: intFlag("tokenDuration", 3600, { min: 1 }).pipe(
    Options.withDescription("The token duration in seconds"),
  ),
  global: globalOptions,
}

export type WorkloadGroupCreateArgs = Command.Command.ParseConfig<typeof groupOptions>
export type WorkloadEntryConfigureArgs = Command.Command.ParseConfig<typeof entryOptions>
