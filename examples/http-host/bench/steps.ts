/**
 * Counts the Effect runtime's steps: one per primitive instruction a fiber runs (a `flatMap`'s
 * continuation, a `sync`, a service lookup, a `FiberRef` read, a generator's start...), through
 * Effect's own supervision hook (`Supervisor.onEffect`, switched on by
 * `RuntimeFlags.enableOpSupervision`). Every step costs the runtime time and allocations whatever
 * it does, so steps per request is the figure the hot path's design is judged by (issue 13:
 * "composed in a few steps, not hundreds"). Supervision slows every step: count steps and time
 * requests in separate runs (`bench/inproc.ts --steps`, `bench/inprocDocs.ts --steps`,
 * `BENCH_WEBHOOK_STEPS=1 ... bench/webhooks.ts waybill`).
 */
import * as Effect from "effect/Effect"
import type * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as RuntimeFlags from "effect/RuntimeFlags"
import * as Supervisor from "effect/Supervisor"

/** The instruction of a step and, for the ones that carry one, what it runs (first 100 characters). */
const describe = (effect: unknown): string => {
  const e = effect as {
    readonly _op?: string
    readonly key?: string
    readonly effect_instruction_i0?: unknown
    readonly effect_instruction_i1?: unknown
  }
  const op = e._op ?? "?"
  if (op === "Tag") return `Tag ${e.key ?? ""}`
  const f = typeof e.effect_instruction_i1 === "function" ? e.effect_instruction_i1 : e.effect_instruction_i0
  return typeof f === "function" ? `${op} ${String(f).replace(/\s+/g, " ").slice(0, 100)}` : op
}

class StepCounter extends Supervisor.AbstractSupervisor<void> {
  steps = 0
  readonly kinds = new Map<string, number>()
  readonly value = Effect.void
  constructor(readonly detailed: boolean) {
    super()
  }
  override onEffect<A, E>(_fiber: Fiber.RuntimeFiber<A, E>, effect: Effect.Effect<unknown, unknown, unknown>): void {
    this.steps++
    if (!this.detailed) return
    const kind = describe(effect)
    this.kinds.set(kind, (this.kinds.get(kind) ?? 0) + 1)
  }
}

/**
 * A layer to merge into the one a runtime is built from, and the steps its fibers ran since.
 * `detailed`: also count steps by kind (slower still), for {@link printSteps}.
 */
export const stepCounter = (detailed = false) => {
  const counter = new StepCounter(detailed)
  return {
    layer: Layer.merge(RuntimeFlags.enableOpSupervision, Supervisor.addSupervisor(counter)),
    steps: (): number => counter.steps,
    kinds: (): ReadonlyMap<string, number> => new Map(counter.kinds)
  }
}

/** Prints the steps per unit of work since `before` (a {@link stepCounter}'s `kinds()`), most first. */
export const printSteps = (
  counter: ReturnType<typeof stepCounter>,
  since: { readonly steps: number; readonly kinds: ReadonlyMap<string, number> },
  count: number,
  unit: string
) => {
  console.log(`Effect runtime steps per ${unit}: ${((counter.steps() - since.steps) / count).toFixed(1)}`)
  const rows = [...counter.kinds()]
    .map(([kind, n]) => [kind, (n - (since.kinds.get(kind) ?? 0)) / count] as const)
    .filter(([, n]) => n >= 0.5)
    .sort((a, b) => b[1] - a[1])
  for (const [kind, n] of rows.slice(0, 40)) console.log(`${n.toFixed(1).padStart(7)}  ${kind}`)
}
