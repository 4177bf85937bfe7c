/** The `admin` group's flags (spec part 3 §4.2): every command under `admin` takes them. */
import { Options } from "@effect/cli"
import { textFlag } from "../../shared/options.js"
import { DEFAULT_CONTROL_PLANE_LABEL } from "../control-plane-options.js"

export const adminGroupOptions = {
  revision: textFlag("revision").pipe(Options.withAlias("r"), Options.withDescription("Control plane revision")),
  selector: textFlag("selector", DEFAULT_CONTROL_PLANE_LABEL).pipe(
    Options.withAlias("l"),
    Options.withDescription("Label selector of the control-plane pods"),
  ),
}
