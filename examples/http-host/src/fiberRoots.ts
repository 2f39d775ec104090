/**
 * @module fiberRoots
 *
 * Keeps Effect's root fibers in a linked list instead of a `Set` (`serve` calls it).
 *
 * Effect records every root fiber (one per `runPromise` or `runFork`: one per request here) in a
 * process-wide `Set` while it runs, so that `Fiber.roots` can list them. Under load that set adds
 * and deletes thousands of fibers a second and V8 rehashes its table over and over. Once the
 * table has lived long enough to reach the old generation, V8 allocates each new table there
 * too, and the table it replaces still points at the fibers it held. Those tables are garbage,
 * but a young-generation collection keeps whatever an old object points at without knowing
 * whether that object is in use, so the fibers, with everything their requests reached, survive
 * and are promoted, and the next tables hold the next fibers. The old generation then receives
 * every request's state until a full collection.
 *
 * Measured under the booking bench (`bench/inproc.ts`, 32 at a time, pretenuring off): 659-673 KB
 * promoted per young collection with the `Set`, 48 KB with the list. The state is bistable: a
 * `/healthz` that waits once in `Effect.async` either never enters it or cost 43-50 us a request
 * in it instead of 22-32 (`docs/benchmarks.md`, session 13).
 *
 * The list unlinks a finished fiber and clears the node, so nothing keeps a pointer to a fiber
 * that has ended. `Fiber.roots` still lists the running root fibers. If Effect's internals are
 * not what this expects (another version), nothing is changed.
 */

interface RootNode {
  fiber: unknown
  prev: RootNode | undefined
  next: RootNode | undefined
}

/**
 * The root fibers in the order they started. Effect only adds, deletes and iterates (`Fiber.roots`
 * is `Array.from` of it), so that is all the list does.
 */
class RootList {
  private head: RootNode | undefined = undefined
  private tail: RootNode | undefined = undefined

  push(fiber: unknown): RootNode {
    const node: RootNode = { fiber, prev: this.tail, next: undefined }
    if (this.tail === undefined) this.head = node
    else this.tail.next = node
    this.tail = node
    return node
  }

  unlink(node: RootNode): void {
    if (node.fiber === undefined) return
    if (node.prev === undefined) this.head = node.next
    else node.prev.next = node.next
    if (node.next === undefined) this.tail = node.prev
    else node.next.prev = node.prev
    node.fiber = undefined
    node.prev = undefined
    node.next = undefined
  }

  /** For fibers that were in the `Set` when the list took over: their observers call this. */
  delete(fiber: unknown): boolean {
    for (let n = this.head; n !== undefined; n = n.next) {
      if (n.fiber === fiber) {
        this.unlink(n)
        return true
      }
    }
    return false
  }

  *[Symbol.iterator](): IterableIterator<unknown> {
    for (let n = this.head; n !== undefined; n = n.next) yield n.fiber
  }
}

interface EffectGlobalScope {
  roots: unknown
  add: (runtimeFlags: unknown, child: { addObserver: (f: () => void) => void }) => void
}

/** Where Effect keeps its process-wide values (`effect/GlobalValue`) and its global fiber scope. */
const globalScope = (): EffectGlobalScope | undefined => {
  const store = (globalThis as Record<string, unknown>)["effect/GlobalValue"]
  if (!(store instanceof Map)) return undefined
  const scope = store.get(Symbol.for("effect/FiberScope/Global")) as Partial<EffectGlobalScope> | undefined
  if (scope === undefined || !(scope.roots instanceof Set || scope.roots instanceof RootList)) return undefined
  if (typeof scope.add !== "function") return undefined
  return scope as EffectGlobalScope
}

/**
 * Moves Effect's root fibers from its `Set` to a {@link RootList}. Call it once the Effect runtime
 * is loaded (it is, once any `effect` module is imported). Answers whether the list is in place;
 * idempotent.
 */
export const trackRootFibersInAList = (): boolean => {
  const scope = globalScope()
  if (scope === undefined) return false
  if (scope.roots instanceof RootList) return true
  const list = new RootList()
  for (const fiber of scope.roots as Set<unknown>) list.push(fiber)
  scope.roots = list
  scope.add = (_runtimeFlags, child) => {
    const node = list.push(child)
    child.addObserver(() => list.unlink(node))
  }
  return true
}
