/**
 * `/quitquitquit` and `/drain` act on the whole pod, so the status port accepts them only from
 * the pod itself (as the reference: a loopback peer address), and only as POST.
 */

/** True for 127.0.0.0/8, ::1 and their IPv4-mapped form (::ffff:127.x.y.z). */
export const isLoopbackAddress = (address: string | undefined): boolean => {
  if (address === undefined) return false
  const a = address.trim().toLowerCase()
  if (a === "::1" || a === "0:0:0:0:0:0:0:1") return true
  const v4 = a.startsWith("::ffff:") ? a.slice("::ffff:".length) : a
  const octets = v4.split(".")
  return octets.length === 4 && octets[0] === "127" && octets.every((o) => /^\d{1,3}$/.test(o) && Number(o) <= 255)
}

export type LocalActionCheck =
  | { readonly ok: true }
  | { readonly ok: false; readonly status: 403 | 405; readonly message: string }

/** The peer is checked first (a remote caller learns nothing more), then the method. */
export const checkLocalPost = (remoteAddress: string | undefined, method: string): LocalActionCheck =>
  !isLoopbackAddress(remoteAddress)
    ? { ok: false, status: 403, message: "Only requests from localhost are allowed\n" }
    : method.toUpperCase() !== "POST"
      ? { ok: false, status: 405, message: "Method Not Allowed\n" }
      : { ok: true }
