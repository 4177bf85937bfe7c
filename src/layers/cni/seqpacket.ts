/**
 * A Unix SOCK_SEQPACKET listener whose connections send messages with file descriptors attached
 * (SCM_RIGHTS): what the node proxy's socket protocol needs and Node's `net` cannot do (it has
 * stream sockets only, and passes descriptors only between Node processes over its IPC pipes).
 * The system calls go through koffi (a C FFI with prebuilt binaries) to the C library.
 *
 * One reactor per listener: a single `poll()` over the listener, its connections and a wake-up
 * pipe runs on libuv's thread pool (koffi's async call), so nothing blocks the event loop and
 * no thread spins; when it returns, the event loop accepts, reads (non-blocking) and arms the
 * next poll. Sends are non-blocking `sendmsg` calls on the event loop: the protocol sends one
 * small message and waits for its answer, so a full socket buffer means a peer that does not
 * read, and fails the send. Descriptors are closed only between polls (a wake-up ends the
 * current one), never while the poll thread may be using them.
 *
 * Bounds on what a peer can do: a message is at most MAX_MESSAGE_BYTES (the reference reads
 * into a 1,024-byte buffer; a longer one fails the connection), descriptors a peer sends are
 * discarded by the kernel (no control buffer is given), at most MAX_UNREAD messages wait
 * unread per connection (more fails it), and at most `maxConnections` are open (more are
 * accepted and closed at once).
 */
import { closeSync, mkdirSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname } from "node:path"
import { Data, Effect, type Scope } from "effect"
import type Koffi from "koffi"

export class SeqpacketError extends Data.TaggedError("SeqpacketError")<{ readonly message: string }> {}

/** The peer closed the connection (or it was closed here). */
export class SeqpacketClosed extends Data.TaggedError("SeqpacketClosed")<{ readonly reason: string }> {}

export const MAX_MESSAGE_BYTES = 1024
export const MAX_UNREAD = 8

export interface SeqpacketConnection {
  readonly id: number
  /** Sends one message, with `fd` attached when given; fails when the peer is gone or not reading. */
  readonly send: (data: Uint8Array, fd?: number) => Effect.Effect<void, SeqpacketError | SeqpacketClosed>
  /** The next message the peer sent. */
  readonly receive: Effect.Effect<Uint8Array, SeqpacketError | SeqpacketClosed>
  readonly close: Effect.Effect<void>
}

export interface SeqpacketServer {
  readonly path: string
  /** The next accepted connection. */
  readonly accept: Effect.Effect<SeqpacketConnection>
}

// Linux (x86-64 and arm64 share these values and the 64-bit struct layouts below).
const AF_UNIX = 1
const SOCK_SEQPACKET = 5
const SOCK_NONBLOCK = 0o4000
const SOCK_CLOEXEC = 0o2000000
const O_NONBLOCK = 0o4000
const O_CLOEXEC = 0o2000000
const MSG_DONTWAIT = 0x40
const MSG_NOSIGNAL = 0x4000
const MSG_TRUNC = 0x20
const SOL_SOCKET = 1
const SCM_RIGHTS = 1
const POLLIN = 0x1
const POLLERR = 0x8
const POLLHUP = 0x10
const EAGAIN = 11
const EINTR = 4
const SUN_PATH_MAX = 107

/**
 * The C library calls, bound through koffi (loaded only when a server is made). Through
 * `require`: the bundles run in a vm.Script, which has no dynamic import.
 */
const bindLibc = async () => {
  const koffi = createRequire(import.meta.url)("koffi") as typeof Koffi
  const libc = koffi.load("libc.so.6")
  return {
    koffi,
    socket: libc.func("int socket(int, int, int)"),
    bind: libc.func("int bind(int, void *, uint32_t)"),
    listen: libc.func("int listen(int, int)"),
    accept4: libc.func("int accept4(int, void *, void *, int)"),
    sendmsg: libc.func("intptr_t sendmsg(int, void *, int)"),
    recvmsg: libc.func("intptr_t recvmsg(int, void *, int)"),
    poll: libc.func("int poll(void *, uint64_t, int)"),
    pipe2: libc.func("int pipe2(void *, int)"),
    read: libc.func("intptr_t read(int, void *, uint64_t)"),
    write: libc.func("intptr_t write(int, void *, uint64_t)"),
    close: libc.func("int close(int)"),
    strerror: libc.func("const char *strerror(int)"),
  }
}
type Libc = Awaited<ReturnType<typeof bindLibc>>

interface ConnState {
  readonly fd: number
  readonly unread: Array<Uint8Array>
  waiter: ((result: Effect.Effect<Uint8Array, SeqpacketError | SeqpacketClosed>) => void) | undefined
  /** Why it ended (set once). */
  ended: SeqpacketError | SeqpacketClosed | undefined
  /** Closed here: the descriptor is closed at the next turn of the reactor. */
  closing: boolean
}

/**
 * Listens on `path` (an existing file there is removed first, as the reference does: a socket
 * left by an earlier run) until the scope closes, then closes every connection and removes it.
 */
export const listenSeqpacket = (
  path: string,
  maxConnections: number,
): Effect.Effect<SeqpacketServer, SeqpacketError, Scope.Scope> =>
  Effect.gen(function* () {
    if (Buffer.byteLength(path) > SUN_PATH_MAX)
      return yield* new SeqpacketError({ message: `${path}: longer than ${SUN_PATH_MAX} bytes` })
    const c = yield* Effect.tryPromise({
      try: bindLibc,
      catch: (e) => new SeqpacketError({ message: `cannot load the C library through koffi: ${String(e)}` }),
    })
    const failure = (what: string) => {
      const errno = c.koffi.errno()
      return new SeqpacketError({ message: `${what} ${path}: ${c.strerror(errno)} (errno ${errno})` })
    }
    const reactor = yield* Effect.acquireRelease(
      Effect.suspend(() => {
        try {
          mkdirSync(dirname(path), { recursive: true })
          rmSync(path, { force: true })
        } catch (e) {
          return Effect.fail(new SeqpacketError({ message: `cannot prepare ${path}: ${(e as Error).message}` }))
        }
        const fd = c.socket(AF_UNIX, SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC, 0) as number
        if (fd < 0) return Effect.fail(failure("socket for"))
        const address = Buffer.alloc(2 + SUN_PATH_MAX + 1)
        address.writeUInt16LE(AF_UNIX, 0)
        address.write(path, 2)
        if (
          (c.bind(fd, address, 2 + Buffer.byteLength(path) + 1) as number) !== 0 ||
          (c.listen(fd, 16) as number) !== 0
        ) {
          const error = failure("cannot listen on")
          c.close(fd)
          return Effect.fail(error)
        }
        const pipe = new Int32Array(2)
        if ((c.pipe2(pipe, O_NONBLOCK | O_CLOEXEC) as number) !== 0) {
          const error = failure("cannot make the wake-up pipe for")
          c.close(fd)
          return Effect.fail(error)
        }
        return Effect.succeed(new Reactor(c, path, fd, pipe[0]!, pipe[1]!, maxConnections))
      }),
      (reactor) => reactor.stop(),
    )
    return { path, accept: reactor.accept }
  })

class Reactor {
  private readonly conns = new Map<number, ConnState>()
  private readonly accepted: Array<SeqpacketConnection> = []
  private acceptWaiter: ((conn: Effect.Effect<SeqpacketConnection>) => void) | undefined
  private stopping = false
  private polling = false
  private stopped: (() => void) | undefined
  private nextId = 1
  private pollSet = Buffer.alloc(0)
  private readonly receiveBuffer = Buffer.alloc(MAX_MESSAGE_BYTES + 1)
  private readonly receiveIov = Buffer.alloc(16)
  private readonly receiveHeader = Buffer.alloc(56)

  constructor(
    private readonly c: Libc,
    private readonly path: string,
    private readonly listenFd: number,
    private readonly wakeRead: number,
    private readonly wakeWrite: number,
    private readonly maxConnections: number,
  ) {
    this.receiveIov.writeBigUInt64LE(BigInt(c.koffi.address(this.receiveBuffer)), 0)
    this.receiveIov.writeBigUInt64LE(BigInt(this.receiveBuffer.length), 8)
    this.receiveHeader.writeBigUInt64LE(BigInt(c.koffi.address(this.receiveIov)), 16)
    this.receiveHeader.writeBigUInt64LE(1n, 24)
    this.arm()
  }

  readonly accept: Effect.Effect<SeqpacketConnection> = Effect.async<SeqpacketConnection>((resume) => {
    const ready = this.accepted.shift()
    if (ready !== undefined) return resume(Effect.succeed(ready))
    this.acceptWaiter = resume
    return Effect.sync(() => {
      if (this.acceptWaiter === resume) this.acceptWaiter = undefined
    })
  })

  stop(): Effect.Effect<void> {
    return Effect.async<void>((resume) => {
      this.stopping = true
      this.stopped = () => resume(Effect.void)
      if (this.polling) this.wake()
      else this.finish()
    })
  }

  private wake(): void {
    this.c.write(this.wakeWrite, Buffer.from([1]), 1)
  }

  /** Starts the next poll over the listener, the wake-up pipe and every open connection. */
  private arm(): void {
    const fds = [this.wakeRead, this.listenFd, ...this.conns.keys()]
    if (this.pollSet.length < fds.length * 8) this.pollSet = Buffer.alloc(fds.length * 16)
    fds.forEach((fd, index) => {
      this.pollSet.writeInt32LE(fd, index * 8)
      this.pollSet.writeInt16LE(POLLIN, index * 8 + 4)
      this.pollSet.writeInt16LE(0, index * 8 + 6)
    })
    const set = this.pollSet
    this.polling = true
    this.c.poll.async(set, fds.length, -1, (error: unknown, count: number) => {
      this.polling = false
      if (this.stopping) {
        this.finish()
        return
      }
      if (error === null && count > 0) {
        fds.forEach((fd, index) => {
          const revents = set.readInt16LE(index * 8 + 6)
          if (revents === 0) return
          if (fd === this.wakeRead) this.drainWake()
          else if (fd === this.listenFd) this.acceptAll()
          else this.readAll(fd, revents)
        })
      }
      this.closeRequested()
      this.arm()
    })
  }

  private drainWake(): void {
    const sink = Buffer.alloc(64)
    while ((this.c.read(this.wakeRead, sink, sink.length) as number) > 0) {}
  }

  private acceptAll(): void {
    for (;;) {
      const fd = this.c.accept4(this.listenFd, null, null, SOCK_NONBLOCK | SOCK_CLOEXEC) as number
      if (fd < 0) return
      if (this.conns.size >= this.maxConnections) {
        this.c.close(fd)
        continue
      }
      const state: ConnState = { fd, unread: [], waiter: undefined, ended: undefined, closing: false }
      this.conns.set(fd, state)
      const connection = this.connectionOf(state, this.nextId++)
      const waiter = this.acceptWaiter
      this.acceptWaiter = undefined
      if (waiter !== undefined) waiter(Effect.succeed(connection))
      else this.accepted.push(connection)
    }
  }

  /** Reads what the peer sent (one message per packet) until nothing is left. */
  private readAll(fd: number, revents: number): void {
    const state = this.conns.get(fd)
    if (state === undefined || state.ended !== undefined) return
    for (;;) {
      this.receiveHeader.writeInt32LE(0, 48)
      const n = this.c.recvmsg(fd, this.receiveHeader, MSG_DONTWAIT) as number
      const problem = this.receiveProblem(n, revents)
      if (problem === "drained") return
      if (problem !== undefined) {
        this.end(state, problem)
        return
      }
      const message = new Uint8Array(this.receiveBuffer.subarray(0, n))
      if (state.waiter !== undefined) {
        const waiter = state.waiter
        state.waiter = undefined
        waiter(Effect.succeed(message))
      } else if (state.unread.length < MAX_UNREAD) state.unread.push(message)
      else {
        this.end(state, new SeqpacketError({ message: `more than ${MAX_UNREAD} messages unread` }))
        return
      }
    }
  }

  /** What a receive of `n` bytes means: a message (undefined), nothing more to read, or the end. */
  private receiveProblem(n: number, revents: number): SeqpacketError | SeqpacketClosed | "drained" | undefined {
    if (n < 0) {
      const errno = this.c.koffi.errno()
      if (errno !== EAGAIN && errno !== EINTR)
        return new SeqpacketError({ message: `receive: ${this.c.strerror(errno)}` })
      return (revents & (POLLHUP | POLLERR)) !== 0 ? new SeqpacketClosed({ reason: "hung up" }) : "drained"
    }
    if (n === 0) return new SeqpacketClosed({ reason: "the peer closed the connection" })
    if (n > MAX_MESSAGE_BYTES || (this.receiveHeader.readInt32LE(48) & MSG_TRUNC) !== 0)
      return new SeqpacketError({ message: `a message over ${MAX_MESSAGE_BYTES} bytes` })
    return undefined
  }

  private end(state: ConnState, reason: SeqpacketError | SeqpacketClosed): void {
    if (state.ended !== undefined) return
    state.ended = reason
    state.closing = true
    state.unread.length = 0
    const waiter = state.waiter
    state.waiter = undefined
    waiter?.(Effect.fail(reason))
  }

  /** Closes the descriptors of connections that ended (safe: no poll is running now). */
  private closeRequested(): void {
    for (const [fd, state] of this.conns) {
      if (!state.closing) continue
      this.conns.delete(fd)
      this.c.close(fd)
    }
  }

  private finish(): void {
    for (const state of this.conns.values()) this.end(state, new SeqpacketClosed({ reason: "the server stopped" }))
    this.closeRequested()
    for (const fd of [this.listenFd, this.wakeRead, this.wakeWrite]) this.c.close(fd)
    rmSync(this.path, { force: true })
    this.stopped?.()
  }

  private connectionOf(state: ConnState, id: number): SeqpacketConnection {
    const c = this.c
    return {
      id,
      send: (data, fd) =>
        Effect.suspend(() => {
          if (state.ended !== undefined) return Effect.fail(state.ended)
          if (data.length > MAX_MESSAGE_BYTES)
            return Effect.fail(new SeqpacketError({ message: `a message over ${MAX_MESSAGE_BYTES} bytes` }))
          // One buffer holds the message header, its one iovec, the control message and the
          // payload, and is the call's argument: nothing it points into can be collected before
          // the call returns. Offsets: msghdr 0 (56 bytes), iovec 56 (16), control 72 (24), data 96.
          const header = Buffer.alloc(96 + data.length)
          const base = BigInt(c.koffi.address(header))
          header.set(data, 96)
          header.writeBigUInt64LE(base + 96n, 56)
          header.writeBigUInt64LE(BigInt(data.length), 64)
          header.writeBigUInt64LE(base + 56n, 16)
          header.writeBigUInt64LE(1n, 24)
          // One descriptor: cmsghdr {len 20, SOL_SOCKET, SCM_RIGHTS, fd}, padded to CMSG_SPACE(4) = 24.
          if (fd !== undefined) {
            header.writeBigUInt64LE(20n, 72)
            header.writeInt32LE(SOL_SOCKET, 80)
            header.writeInt32LE(SCM_RIGHTS, 84)
            header.writeInt32LE(fd, 88)
            header.writeBigUInt64LE(base + 72n, 32)
            header.writeBigUInt64LE(24n, 40)
          }
          const sent = c.sendmsg(state.fd, header, MSG_DONTWAIT | MSG_NOSIGNAL) as number
          if (sent === data.length) return Effect.void
          const errno = c.koffi.errno()
          const error =
            sent >= 0
              ? new SeqpacketError({ message: `sent ${sent} of ${data.length} bytes` })
              : errno === EAGAIN
                ? new SeqpacketError({ message: "the peer is not reading (socket buffer full)" })
                : new SeqpacketClosed({ reason: `send: ${c.strerror(errno)}` })
          this.end(state, error)
          this.wake()
          return Effect.fail(error)
        }),
      receive: Effect.async<Uint8Array, SeqpacketError | SeqpacketClosed>((resume) => {
        const ready = state.unread.shift()
        if (ready !== undefined) return resume(Effect.succeed(ready))
        if (state.ended !== undefined) return resume(Effect.fail(state.ended))
        state.waiter = resume
        return Effect.sync(() => {
          if (state.waiter === resume) state.waiter = undefined
        })
      }),
      close: Effect.sync(() => {
        if (state.ended !== undefined && !this.conns.has(state.fd)) return
        this.end(state, new SeqpacketClosed({ reason: "closed by the node agent" }))
        if (this.polling) this.wake()
        else this.closeRequested()
      }),
    }
  }
}

/** Closes a descriptor opened with node:fs; a descriptor already closed is fine. */
export const closeFd = (fd: number): void => {
  try {
    closeSync(fd)
  } catch {
    // Already closed.
  }
}
