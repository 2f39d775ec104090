import { describe, expect, it } from "@effect/vitest"
import * as fc from "effect/FastCheck"
import { provisioningDefaults as limits } from "../src/shared/Config.js"
import * as R from "../src/provisioning/Registration.js"

const T0 = 1_800_000_000_000
const GOOD = "good-code"
const LINK = "good-link"
const KEY = "good-key"

const fresh = (): R.State => R.initial({ otpHash: GOOD, linkHash: LINK, now: T0, mailSent: true }, limits)

/** Moves with a mix of right and wrong secrets; time only moves forward (by `dt`). */
const moveArb: fc.Arbitrary<(now: number, n: number) => R.Move> = fc.oneof(
  fc.boolean().map((right) => (now: number) => ({ _tag: "Verify", codeHash: right ? GOOD : "wrong", now }) as const),
  fc.boolean().map((right) => (now: number) => ({ _tag: "FollowLink", linkHash: right ? LINK : "bad", now }) as const),
  fc.constant((now: number, n: number) => ({ _tag: "Resend", otpHash: GOOD, linkHash: `${LINK}`, now, n }) as const),
  fc.constant((now: number) => ({ _tag: "Check", validationKeyHash: KEY, now }) as const),
  fc
    .boolean()
    .map(
      (right) => (now: number, n: number) =>
        ({ _tag: "Start", validationKeyHash: right ? KEY : "bad", customerNo: `C${n}`, now }) as const
    ),
  fc
    .boolean()
    .map((right) => (now: number) => ({ _tag: "Step1", validationKeyHash: right ? KEY : "bad", now }) as const),
  fc
    .boolean()
    .map((right) => (now: number) => ({ _tag: "Step2", validationKeyHash: right ? KEY : "bad", now }) as const),
  fc.constant((now: number) => ({ _tag: "PaymentCheck", validationKeyHash: KEY, now }) as const)
) as fc.Arbitrary<(now: number, n: number) => R.Move>

const walkArb = fc.array(fc.tuple(moveArb, fc.integer({ min: 0, max: 400_000 })), { maxLength: 40 })

const walk = (steps: ReadonlyArray<readonly [(now: number, n: number) => R.Move, number]>) => {
  let state = fresh()
  let now = T0
  const trace: Array<{ before: R.State; move: R.Move; decision: R.Decision }> = []
  steps.forEach(([make, dt], n) => {
    now += dt
    const move = make(now, n)
    const decision = R.decide(state, move, limits)
    trace.push({ before: state, move, decision })
    state = decision.state
  })
  return trace
}

describe("Registration machine", () => {
  it.prop("no move sequence reaches verified without a right code or link", [walkArb], ([steps]) => {
    for (const { before, move, decision } of walk(steps)) {
      if (before.stage === "pending" && decision.state.stage !== "pending") {
        expect(decision.outcome._tag).toBe("Verified")
        expect(
          (move._tag === "Verify" && move.codeHash === GOOD) || (move._tag === "FollowLink" && move.linkHash === LINK)
        ).toBe(true)
      }
      // Nothing after pending is reachable by another route.
      if (before.stage === "pending" && move._tag !== "Verify" && move._tag !== "FollowLink")
        expect(decision.state.stage).toBe("pending")
    }
  })

  it.prop("a wrong code never verifies and always counts (until the limit)", [walkArb], ([steps]) => {
    for (const { before, move, decision } of walk(steps)) {
      if (move._tag === "Verify" && move.codeHash !== GOOD) {
        expect(decision.state.stage).toBe(before.stage)
        if (before.stage === "pending") expect(decision.outcome._tag).toBe("Rejected")
        expect(decision.state.totalFailures).toBeGreaterThanOrEqual(before.totalFailures)
      }
    }
  })

  it.prop(
    "only a pending registration verifies: after verification no code is answered with success",
    [walkArb],
    ([steps]) => {
      for (const { before, move, decision } of walk(steps)) {
        if (decision.outcome._tag === "Verified") expect(before.stage).toBe("pending")
        if (move._tag === "Verify" && before.stage !== "pending")
          expect(decision.outcome).toEqual({ _tag: "Rejected", reason: "already-verified" })
      }
    }
  )

  it("the used code, sent again, is refused", () => {
    const v = R.decide(fresh(), { _tag: "Verify", codeHash: GOOD, now: T0 + 1 }, limits)
    expect(v.outcome._tag).toBe("Verified")
    for (const codeHash of [GOOD, "wrong"])
      expect(R.decide(v.state, { _tag: "Verify", codeHash, now: T0 + 2 }, limits)).toEqual({
        state: v.state,
        outcome: { _tag: "Rejected", reason: "already-verified" }
      })
  })

  it.prop("the failure total never goes down and never passes the limits", [walkArb], ([steps]) => {
    for (const { before, decision } of walk(steps)) {
      expect(decision.state.totalFailures).toBeGreaterThanOrEqual(before.totalFailures)
      expect(decision.state.totalFailures).toBeLessThanOrEqual(limits.maxFailuresPerRegistration)
      expect(decision.state.otpFailures).toBeLessThanOrEqual(limits.maxFailuresPerCode)
    }
  })

  it.prop("resend never resets the registration's failure count", [walkArb], ([steps]) => {
    for (const { before, move, decision } of walk(steps)) {
      if (move._tag === "Resend") expect(decision.state.totalFailures).toBe(before.totalFailures)
    }
  })

  it.prop("start repeated returns the same customer number", [walkArb], ([steps]) => {
    const numbers = new Set<string>()
    for (const { decision } of walk(steps)) {
      if (decision.outcome._tag === "Started") numbers.add(decision.outcome.customerNo)
    }
    expect(numbers.size).toBeLessThanOrEqual(1)
  })

  it.prop("step1 never succeeds before start; step2 never before step1", [walkArb], ([steps]) => {
    for (const { before, decision, move } of walk(steps)) {
      if (move._tag === "Step1" && before.customerNo === null) expect(decision.outcome._tag).toBe("Rejected")
      if (move._tag === "Step2" && before.stage !== "active") expect(decision.outcome._tag).toBe("Rejected")
      if (decision.outcome._tag === "Activated") expect(before.customerNo).not.toBeNull()
    }
  })

  it("the happy path, with step2 optional", () => {
    let s = fresh()
    const go = (move: R.Move) => {
      const d = R.decide(s, move, limits)
      s = d.state
      return d.outcome
    }
    expect(go({ _tag: "Verify", codeHash: GOOD, now: T0 + 1 })).toEqual({ _tag: "Verified" })
    expect(go({ _tag: "Check", validationKeyHash: KEY, now: T0 + 2 })).toEqual({ _tag: "Checked" })
    expect(go({ _tag: "Start", validationKeyHash: KEY, customerNo: "1234567", now: T0 + 3 })).toEqual({
      _tag: "Started",
      customerNo: "1234567",
      created: true
    })
    expect(go({ _tag: "Start", validationKeyHash: KEY, customerNo: "7654321", now: T0 + 4 })).toEqual({
      _tag: "Started",
      customerNo: "1234567",
      created: false
    })
    expect(go({ _tag: "Step1", validationKeyHash: KEY, now: T0 + 5 })).toEqual({
      _tag: "Activated",
      customerNo: "1234567",
      first: true
    })
    expect(s.stage).toBe("active")
    expect(go({ _tag: "Step1", validationKeyHash: KEY, now: T0 + 6 })).toMatchObject({ first: false })
  })

  it("code limits: 5 wrong per code, the right code dead after that, 10 per registration", () => {
    let s = fresh()
    const verify = (code: string, now: number) => {
      const d = R.decide(s, { _tag: "Verify", codeHash: code, now }, limits)
      s = d.state
      return d.outcome
    }
    for (let i = 0; i < 5; i++) expect(verify("x", T0 + i)).toMatchObject({ reason: "wrong-code" })
    expect(verify("x", T0 + 6)).toMatchObject({ reason: "code-attempts-exceeded" })
    expect(verify(GOOD, T0 + 7)).toMatchObject({ reason: "code-attempts-exceeded" })
    expect(s.totalFailures).toBe(5)
    let d = R.decide(s, { _tag: "Resend", otpHash: "code2", linkHash: "l2", now: T0 + 30_000 }, limits)
    expect(d.outcome).toMatchObject({ reason: "resend-too-soon", retryAfterMs: 30_000 })
    d = R.decide(s, { _tag: "Resend", otpHash: "code2", linkHash: "l2", now: T0 + 60_000 }, limits)
    expect(d.outcome._tag).toBe("Resent")
    s = d.state
    expect(s.totalFailures).toBe(5)
    expect(verify(GOOD, T0 + 60_001)).toMatchObject({ reason: "wrong-code" }) // old code dead
    for (let i = 0; i < 4; i++) verify("x", T0 + 60_002 + i)
    expect(s.totalFailures).toBe(10)
    expect(verify("code2", T0 + 60_010)).toMatchObject({ reason: "registration-locked" })
  })

  it("an expired code is refused without counting; a used link is dead", () => {
    const s = fresh()
    const d = R.decide(s, { _tag: "Verify", codeHash: GOOD, now: s.otpExpiresAt }, limits)
    expect(d.outcome).toMatchObject({ reason: "code-expired" })
    expect(d.state.totalFailures).toBe(0)
    const v = R.decide(s, { _tag: "FollowLink", linkHash: LINK, now: T0 + 1 }, limits)
    expect(v.outcome._tag).toBe("Verified")
    expect(R.decide(v.state, { _tag: "FollowLink", linkHash: LINK, now: T0 + 2 }, limits).outcome).toMatchObject({
      reason: "link-invalid"
    })
  })

  it("at most 5 resends a day", () => {
    let s = fresh()
    let now = T0
    for (let i = 0; i < 5; i++) {
      now += 60_000
      const d = R.decide(s, { _tag: "Resend", otpHash: `c${i}`, linkHash: `l${i}`, now }, limits)
      expect(d.outcome._tag).toBe("Resent")
      s = d.state
    }
    now += 60_000
    expect(R.decide(s, { _tag: "Resend", otpHash: "c", linkHash: "l", now }, limits).outcome).toMatchObject({
      reason: "resend-limit"
    })
  })
})
