/** The label selector of the control-plane pods: the given one, narrowed to `--revision`. */
import { Labels } from "../../services/constants.js"

export const controlPlaneSelector = (label: string, revision: string): string =>
  revision === "" || revision === "default" ? label : `${label},${Labels.revision}=${revision}`
