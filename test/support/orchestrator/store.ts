/**
 * The versioned object store: one global resourceVersion counter (as etcd's revision), the
 * current objects per type, and a bounded history of changes that watches replay from and
 * paged lists read their consistent snapshot from. Stored objects are never mutated.
 */
import { type KubeObject, type ResourceType, storageKey } from "./resources.js"

export type EventType = "ADDED" | "MODIFIED" | "DELETED"

export interface StoreEvent {
  readonly type: EventType
  readonly rv: number
  /** Storage key of the type. */
  readonly key: string
  readonly object: KubeObject
  /** The object before a MODIFIED or DELETED. */
  readonly previous?: KubeObject
}

const objectKey = (namespace: string | undefined, name: string): string => `${namespace ?? ""}/${name}`

export class Store {
  private revision: number
  private readonly objects = new Map<string, Map<string, KubeObject>>()
  private history: Array<StoreEvent> = []
  /** Every change with rv > this is still in `history`. */
  private historyStart: number
  private readonly listeners = new Set<(e: StoreEvent) => void>()

  constructor(
    private readonly historyLimit: number,
    startRevision = 1000,
  ) {
    this.revision = startRevision
    this.historyStart = startRevision
  }

  get resourceVersion(): number {
    return this.revision
  }

  /** The oldest resourceVersion a watch or a paged list can still start from. */
  get oldestResourceVersion(): number {
    return this.historyStart
  }

  nextRevision(): number {
    return ++this.revision
  }

  get(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.get(storageKey(type))?.get(objectKey(namespace, name))
  }

  /** Current objects in key order (namespace, then name), as etcd lists them. */
  list(type: ResourceType, namespace?: string): Array<KubeObject> {
    const all = [...(this.objects.get(storageKey(type))?.entries() ?? [])]
    return sortByKey(all)
      .map(([, o]) => o)
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
  }

  /**
   * Objects as they were at `rv` (undoing later changes from the history), or undefined when
   * the history no longer reaches back that far.
   */
  listAt(type: ResourceType, rv: number, namespace?: string): Array<KubeObject> | undefined {
    if (rv < this.historyStart) return undefined
    const key = storageKey(type)
    const state = new Map(this.objects.get(key) ?? [])
    for (let i = this.history.length - 1; i >= 0 && this.history[i]!.rv > rv; i--) {
      const e = this.history[i]!
      if (e.key !== key) continue
      const k = objectKey(e.object.metadata.namespace, e.object.metadata.name!)
      if (e.previous === undefined) state.delete(k)
      else state.set(k, e.previous)
    }
    return sortByKey([...state.entries()])
      .map(([, o]) => o)
      .filter((o) => namespace === undefined || o.metadata.namespace === namespace)
  }

  /** Changes of `type` after `rv`, or undefined when they were compacted away. */
  eventsSince(type: ResourceType, rv: number): Array<StoreEvent> | undefined {
    if (rv < this.historyStart) return undefined
    const key = storageKey(type)
    return this.history.filter((e) => e.rv > rv && e.key === key)
  }

  /** Writes `object`, whose metadata.resourceVersion the caller set from `nextRevision()`. */
  put(type: ResourceType, object: KubeObject): StoreEvent {
    const key = storageKey(type)
    const byName = this.objects.get(key) ?? new Map<string, KubeObject>()
    this.objects.set(key, byName)
    const k = objectKey(object.metadata.namespace, object.metadata.name!)
    const previous = byName.get(k)
    byName.set(k, object)
    return this.record({
      type: previous === undefined ? "ADDED" : "MODIFIED",
      rv: Number(object.metadata.resourceVersion),
      key,
      object,
      ...(previous === undefined ? {} : { previous }),
    })
  }

  /** Removes an object; the DELETED event carries it with the deletion's resourceVersion. */
  remove(type: ResourceType, namespace: string | undefined, name: string): KubeObject | undefined {
    const key = storageKey(type)
    const previous = this.objects.get(key)?.get(objectKey(namespace, name))
    if (previous === undefined) return undefined
    this.objects.get(key)!.delete(objectKey(namespace, name))
    const rv = this.nextRevision()
    const object = { ...previous, metadata: { ...previous.metadata, resourceVersion: String(rv) } }
    this.record({ type: "DELETED", rv, key, object, previous })
    return object
  }

  /** Drops the whole history: every older resourceVersion is now expired. */
  compact(): void {
    this.history = []
    this.historyStart = this.revision
  }

  subscribe(listener: (e: StoreEvent) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  private record(event: StoreEvent): StoreEvent {
    this.history.push(event)
    while (this.history.length > this.historyLimit) this.historyStart = this.history.shift()!.rv
    for (const listener of [...this.listeners]) listener(event)
    return event
  }
}

const sortByKey = <A>(entries: Array<[string, A]>): Array<[string, A]> =>
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
