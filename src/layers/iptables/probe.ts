/**
 * The validation probe (`--run-validation`): inside the pod's namespace a child process listens
 * on the capture ports and on the probe port, then, as the proxy's user, connects to the probe
 * port on the inbound-passthrough address. Passing means the connection landed on a capture
 * port; landing on the probe port itself, or nothing within the timeout, means the rules do not
 * redirect. The child reports one JSON line.
 */

/** Runs as `node -e PROBE_SCRIPT <json>`; CommonJS so it needs no file. */
export const PROBE_SCRIPT = `
const net = require("net");
const cfg = JSON.parse(process.argv[1]);
const nonce = "mesh-iptables-probe-" + process.pid + "-" + Date.now();
let done = false;
let lastError = "";
const finish = (code, result) => {
  if (done) return;
  done = true;
  process.stdout.write(JSON.stringify(result) + "\\n", () => process.exit(code));
};
setTimeout(() => finish(1, { timeout: true, lastError }), cfg.timeoutMs);
const attempt = () => {
  if (done) return;
  const socket = net.connect({ host: cfg.target, port: cfg.port, localAddress: cfg.localAddress });
  socket.on("connect", () => socket.write(nonce));
  socket.on("error", (error) => {
    lastError = error.message;
    socket.destroy();
    setTimeout(attempt, 50);
  });
};
let waiting = cfg.listeners.length;
for (const listener of cfg.listeners) {
  const server = net.createServer((socket) => {
    let data = "";
    socket.on("error", () => {});
    socket.on("data", (chunk) => {
      data += chunk;
      if (data.includes(nonce)) {
        socket.end();
        finish(listener.role === "probe" ? 1 : 0, { landed: listener.role, host: listener.host, port: listener.port });
      }
    });
  });
  server.on("error", (error) =>
    finish(2, { error: "cannot listen on " + listener.host + ":" + listener.port + ": " + error.message }),
  );
  server.listen(listener.port, listener.host, () => {
    waiting -= 1;
    if (waiting > 0) return;
    try {
      if (cfg.gid !== undefined) {
        process.setgroups([cfg.gid]);
        process.setgid(cfg.gid);
      }
      if (cfg.uid !== undefined) process.setuid(cfg.uid);
    } catch (error) {
      finish(2, { error: "cannot switch to uid " + cfg.uid + ": " + error.message });
      return;
    }
    attempt();
  });
}
`

export interface ProbeListener {
  readonly host: string
  readonly port: number
  readonly role: "outbound capture" | "inbound capture" | "probe"
}

export interface ProbeInput {
  readonly target: string
  readonly port: number
  readonly localAddress: string
  readonly listeners: ReadonlyArray<ProbeListener>
  readonly uid?: number
  readonly gid?: number
  readonly timeoutMs: number
}

export interface ProbeOutput {
  readonly landed?: ProbeListener["role"]
  readonly host?: string
  readonly port?: number
  readonly timeout?: boolean
  readonly lastError?: string
  readonly error?: string
}

/** What to probe for one family: connect to the passthrough address's probe port. */
export const probeInput = (
  family: 4 | 6,
  ports: { readonly proxyPort: number; readonly inboundCapturePort: number; readonly probePort: number },
  owner: { readonly uid?: number; readonly gid?: number },
  timeoutMs: number,
): ProbeInput => {
  const loopback = family === 4 ? "127.0.0.1" : "::1"
  const passthrough = family === 4 ? "127.0.0.6" : "::6"
  return {
    target: passthrough,
    port: ports.probePort,
    localAddress: loopback,
    listeners: [
      { host: loopback, port: ports.proxyPort, role: "outbound capture" },
      { host: loopback, port: ports.inboundCapturePort, role: "inbound capture" },
      { host: passthrough, port: ports.probePort, role: "probe" },
    ],
    ...(owner.uid !== undefined ? { uid: owner.uid } : {}),
    ...(owner.gid !== undefined ? { gid: owner.gid } : {}),
    timeoutMs,
  }
}
