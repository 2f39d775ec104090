/** A fake {@link ViewerResolver} over one user, and a portal built on it, for the pipeline tests. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import {
  createPortal,
  type PortalOptions,
  type PortalRequirements,
  type Viewer,
  type ViewerResolver
} from "../src/index.js"

export const ORIGIN = "https://portal.example.com"
export const EMAIL = "ada@example.com"
export const PASSWORD = "correct horse battery staple"
export const SESSION_TOKEN = "session-token-0123456789abcdefghijklmnopqrstuv"

export const viewer: Viewer = {
  userId: "user-1",
  customerNo: "100001",
  email: EMAIL,
  role: "owner",
  sessionId: "hash-of-the-session-token",
  csrfToken: Redacted.make("csrf-token-of-the-session-0123456789"),
  authenticatedAt: 1_700_000_000_000,
  createdAt: 1_700_000_000_000
}

export interface FakeState {
  live: Set<string>
  signIns: Array<{ email: string; clientIp: string }>
  failStorage: boolean
}

export const fakeResolver = (state: FakeState): ViewerResolver => ({
  authenticate: (token) =>
    state.failStorage
      ? Effect.fail({ _tag: "StorageError" } as const)
      : Effect.succeed(state.live.has(Redacted.value(token)) ? Option.some(viewer) : Option.none()),
  signIn: (input) =>
    Effect.suspend(() => {
      state.signIns.push({ email: input.email, clientIp: input.clientIp })
      if (input.email !== EMAIL || Redacted.value(input.password) !== PASSWORD)
        return Effect.fail({ _tag: "SignInRefused" } as const)
      state.live.add(SESSION_TOKEN)
      return Effect.succeed({ token: Redacted.make(SESSION_TOKEN), viewer })
    }),
  signOut: (token) =>
    Effect.sync(() => {
      state.live.delete(Redacted.value(token))
    })
})

export const makePortal = (options: Partial<PortalOptions> = {}) => {
  const state: FakeState = { live: new Set(), signIns: [], failStorage: false }
  // The fake resolver calls no service, so an empty layer stands in for the portal's requirements.
  const services = Layer.empty as Layer.Layer<PortalRequirements>
  const portal = createPortal(services, { publicOrigin: ORIGIN, resolver: fakeResolver(state), ...options })
  return { portal, state }
}

/** The cookies of a response's `Set-Cookie` lines as name -> whole line. */
export const setCookies = (response: Response): Map<string, string> =>
  new Map(response.headers.getSetCookie().map((line) => [line.split("=", 1)[0]!, line]))

/** The value of a `Set-Cookie` line. */
export const cookieValue = (line: string | undefined): string => line!.split(";", 1)[0]!.split("=").slice(1).join("=")

/** The `csrf` hidden field of a page. */
export const csrfField = (html: string): string => /name="csrf" value="([^"]*)"/.exec(html)![1]!
