/**
 * `POST /api/v1/accountsetup/?action=<action>` with urlencoded fields: account provisioning
 * (interface 2.6, 3, 4.5; DECISIONS.md "Account provisioning"), and the confirm page of the
 * e-mail's verification link, `GET|POST /api/v1/accountsetup/verify/?token=` (GET only shows a
 * page with a button, POST verifies, so mail scanners that prefetch links cannot burn it).
 *
 * Every answer carries `Cache-Control: no-store` (they hold validation keys, API keys) and
 * none ever holds the one-time code. See docs/provisioning.md for each action's answer.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Encoding from "effect/Encoding"
import * as Redacted from "effect/Redacted"
import type * as Schema from "effect/Schema"
import { IpBlocks, Look, Provisioning } from "@waybill/core"
import { mediaType, readBody } from "../internal/body.js"
import { Messages, storageErrors } from "../internal/errors.js"
import { failure, success } from "../internal/respond.js"
import type { Reply, WaybillRequest } from "../Raw.js"
import type { Route, RouteContext } from "./Route.js"
import * as Wire from "../openapi/wire.js"
import { paramsOf } from "../internal/params.js"

class UnsupportedMediaType extends Data.TaggedError("UnsupportedMediaType") {}
class UnreadableForm extends Data.TaggedError("UnreadableForm") {}

const FORM_LIMIT = 16 * 1024
const utf8 = new TextDecoder("utf-8", { fatal: true })
const noStore = { "cache-control": "no-store" }

/** The host set no `baseUrl`, so no verification link can be built safely. */
class LinkBaseMissing extends Data.TaggedError("LinkBaseMissing") {}

const formOf = Effect.fnUntraced(function* (request: WaybillRequest) {
  const bytes = yield* readBody(request, FORM_LIMIT)
  if (bytes.length === 0) return new URLSearchParams()
  if (mediaType(request) !== "application/x-www-form-urlencoded") return yield* new UnsupportedMediaType()
  const text = yield* Effect.try({ try: () => utf8.decode(bytes), catch: () => new UnreadableForm() })
  return new URLSearchParams(text)
})

/**
 * Client-facing status and wording of each refusal; none says whether an e-mail address exists.
 * The OpenAPI document lists the same table.
 */
export const Rejections: Readonly<
  Record<Provisioning.ProvisioningRejected["reason"], { readonly status: number; readonly message: string }>
> = {
  "wrong-code": { status: 400, message: "The verification code is not valid." },
  "code-expired": {
    status: 400,
    message: "The verification code has expired. Request a new one with pre-register-resend."
  },
  "code-attempts-exceeded": {
    status: 429,
    message: "Too many wrong verification codes. Request a new code with pre-register-resend."
  },
  "registration-locked": {
    status: 403,
    message: "Too many wrong verification codes for this registration. Register again."
  },
  "link-invalid": { status: 400, message: "The verification link is not valid, has expired or was already used." },
  "not-verified": { status: 403, message: "The e-mail address is not verified yet." },
  "resend-too-soon": {
    status: 429,
    message: "A verification e-mail was sent moments ago. Retry after Retry-After seconds."
  },
  "already-verified": { status: 409, message: "The e-mail address is already verified." },
  "resend-limit": { status: 429, message: "Too many verification e-mails for this registration today." },
  "validation-key-invalid": {
    status: 401,
    message: "The validation_key is not valid or has expired. Get a new one with pre-register-check."
  },
  "not-started": { status: 409, message: "The customer record does not exist yet. Call start first." },
  "not-active": { status: 409, message: "The account is not active yet. Call step1 first." }
}

const rejection = (e: Provisioning.ProvisioningRejected): Reply => {
  const { status, message } = Rejections[e.reason]
  const retry = e.retryAfterSeconds === undefined ? {} : { "retry-after": String(e.retryAfterSeconds) }
  return failure(status, message, status === 429 ? { ...noStore, ...retry } : noStore)
}

/** What a per-address or per-domain limit refused; a resend registers nothing, so it says e-mails. */
const rateLimitMessage = {
  registration: "Too many registrations. Retry after Retry-After seconds.",
  "verification-email": "Too many verification e-mails from this client address. Retry after Retry-After seconds."
} as const

/** This route's other answers' wording. */
const M = {
  notFound: "Not found.",
  actionRepeated: "The action query parameter was given more than once.",
  actionMissing: "The action query parameter is required.",
  noRegistration: "No pending registration matches the idx given.",
  alreadyRegistered: "This e-mail address already has an account.",
  mailFailed: "The verification e-mail could not be sent. Retry pre-register-resend.",
  busy: "The service is busy. Retry.",
  formTooLarge: "The form is too large.",
  bodyUnreadable: "The request body could not be read.",
  unsupportedMediaType: "Send the fields as application/x-www-form-urlencoded.",
  formNotUtf8: "The form is not valid UTF-8.",
  notConfigured: "Account provisioning is not configured on this server."
} as const

/**
 * This route's answers besides {@link Rejections}, as (status, message) pairs for the OpenAPI
 * document; the wording of invalid fields (400) comes from core and is shown by example.
 */
export const AccountSetupMessages = {
  notFound: M.notFound,
  answers: [
    [400, "Missing required field(s): idx, email_address."],
    [400, "Field(s) given more than once: idx."],
    [400, M.actionMissing],
    [400, M.actionRepeated],
    [400, M.noRegistration],
    [400, M.bodyUnreadable],
    [400, M.formNotUtf8],
    [404, M.notFound],
    [409, M.alreadyRegistered],
    [413, M.formTooLarge],
    [415, M.unsupportedMediaType],
    [429, rateLimitMessage.registration],
    [429, rateLimitMessage["verification-email"]],
    [503, M.mailFailed],
    [503, M.busy],
    [503, M.notConfigured]
  ] as ReadonlyArray<readonly [number, string]>
} as const

const errors = {
  ProvisioningDisabled: () => Effect.succeed(failure(404, M.notFound)),
  ProvisioningInvalid: (e: { readonly message: string }) => Effect.succeed(failure(400, e.message, noStore)),
  RegistrationNotFound: () => Effect.succeed(failure(400, M.noRegistration, noStore)),
  ProvisioningRejected: (e: Provisioning.ProvisioningRejected) => Effect.succeed(rejection(e)),
  ProvisioningRateLimited: (e: Provisioning.ProvisioningRateLimited) =>
    Effect.succeed(
      failure(429, rateLimitMessage[e.refused], {
        ...noStore,
        "retry-after": String(e.retryAfterSeconds)
      })
    ),
  AlreadyRegistered: () => Effect.succeed(failure(409, M.alreadyRegistered, noStore)),
  VerificationMailFailed: () =>
    Effect.succeed(
      failure(503, M.mailFailed, {
        ...noStore,
        "retry-after": "5"
      })
    ),
  DuplicateKey: () => Effect.succeed(failure(503, M.busy, { ...noStore, "retry-after": "1" })),
  ...storageErrors
} as const

/**
 * The verification link's base. Links that leave the request (e-mailed ones) come only from the
 * host's configured `baseUrl`, never from the Host header: a forged Host would otherwise put an
 * attacker's domain into a genuine e-mail and hand them the victim's verification token.
 */
const linkBase = (ctx: RouteContext) => {
  const base = ctx.options.emailLinkBaseUrl ?? ctx.options.baseUrl
  return base === undefined
    ? Effect.fail(new LinkBaseMissing())
    : Effect.succeed(`${base.replace(/\/+$/, "")}/api/v1/accountsetup/verify/`)
}

/** A success answer; `data` is typed by the action's wire schema, so the document cannot drift. */
const ok = <A, I>(_schema: Schema.Schema<A, I>, data: Omit<A, "result">) =>
  success({ result: "success", ...data }, 200, noStore)

const perform = Effect.fnUntraced(function* (ctx: RouteContext, action: string, form: URLSearchParams) {
  const field = (name: string) => form.get(name) ?? ""
  const repeated = [...new Set(form.keys())].filter((k) => form.getAll(k).length > 1)
  if (repeated.length > 0)
    return yield* new Provisioning.ProvisioningInvalid({
      message: `Field(s) given more than once: ${repeated.join(", ")}.`
    })
  const need = (...names: Array<string>) => {
    const missing = names.filter((n) => field(n).trim() === "")
    return missing.length === 0
      ? Effect.void
      : Effect.fail(
          new Provisioning.ProvisioningInvalid({ message: `Missing required field(s): ${missing.join(", ")}.` })
        )
  }
  const provider = yield* Provisioning.paymentProvider
  switch (action) {
    case "pre-register": {
      yield* need("email_address", "password")
      const r = yield* Provisioning.preRegister({
        email: field("email_address"),
        password: Redacted.make(field("password")),
        client: ctx.client,
        linkBase: yield* linkBase(ctx)
      })
      return ok(Wire.PreRegisterData, {
        message: "Check your e-mail for the verification code, or follow the link in it.",
        wait_idx: r.waitIdx,
        verify_expires: r.verifyExpires,
        is_validated: "N"
      })
    }
    case "pre-register-verify": {
      yield* need("idx", "email_address", "verify_code")
      yield* Provisioning.verify({
        idx: field("idx"),
        email: field("email_address"),
        code: Redacted.make(field("verify_code"))
      })
      return ok(Wire.MessageData, { message: "Email verified." })
    }
    case "pre-register-resend": {
      yield* need("idx")
      const r = yield* Provisioning.resend({ idx: field("idx"), linkBase: yield* linkBase(ctx), client: ctx.client })
      return ok(Wire.ResendData, {
        message: "A new verification e-mail was sent.",
        verify_expires: r.verifyExpires,
        is_validated: "N"
      })
    }
    case "pre-register-check": {
      yield* need("idx", "email_address")
      const r = yield* Provisioning.check({ idx: field("idx"), email: field("email_address") })
      return ok(Wire.CheckData, { is_validated: "Y", validation_key: Redacted.value(r.validationKey) })
    }
    case "start": {
      yield* need("validation_key")
      const r = yield* Provisioning.start({ validationKey: field("validation_key") })
      return ok(Wire.StartData, {
        customer_no: r.customerNo,
        frequent_caller_id: r.frequentCallerId,
        has_firmographics: r.hasFirmographics ? "Y" : "N"
      })
    }
    case "step1": {
      const r = yield* Provisioning.step1({
        validationKey: field("validation_key"),
        firstName: field("first_name"),
        lastName: field("last_name"),
        customerName: field("customer_name"),
        localAddr1: field("local_addr1"),
        localCity: field("local_city"),
        localState: field("local_state"),
        localZip: field("local_zip_postal"),
        localPhone: field("local_phone")
      })
      return ok(Wire.Step1Data, {
        message:
          r.keys._tag === "Some"
            ? "Account activated. Store the API keys now: they are shown only once."
            : "Account details updated. The API keys were shown when the account was activated.",
        customer_no: r.customerNo,
        user: { email_address: r.email, first_name: r.firstName, last_name: r.lastName, status: "active" },
        ...(r.keys._tag === "Some"
          ? { api_keys: { production: Redacted.value(r.keys.value.live), test: Redacted.value(r.keys.value.test) } }
          : {})
      })
    }
    case "step2": {
      yield* Provisioning.step2({
        validationKey: field("validation_key"),
        ...(field("billing_addr2") === "" ? {} : { billingAddr2: field("billing_addr2") }),
        billingCity: field("billing_city"),
        billingState: field("billing_state"),
        billingZip: field("billing_zip_postal")
      })
      return ok(Wire.MessageData, { message: "Billing address updated." })
    }
    default: {
      if (action === `registered-with-${provider}-check`) {
        yield* need("validation_key")
        const r = yield* Provisioning.paymentCheck({ validationKey: field("validation_key") })
        return ok(Wire.PaymentCheckData, { provider, registered: r.registered ? "Y" : "N" })
      }
      return yield* new Provisioning.ProvisioningInvalid({
        message:
          action === ""
            ? M.actionMissing
            : "Unknown action. Use pre-register, pre-register-verify, pre-register-resend, pre-register-check, start, step1, step2 or " +
              `registered-with-${provider}-check.`
      })
    }
  }
})

const accountSetupAnswer = Effect.fnUntraced(function* (ctx: RouteContext) {
  if (!(yield* Provisioning.enabled)) return failure(404, M.notFound)
  // Blocked addresses get the same answer here as on every other endpoint.
  yield* IpBlocks.check(ctx.client)
  const actions = paramsOf(Wire.AccountSetupParams, ctx.url)("action")
  if (actions.length > 1) return failure(400, M.actionRepeated, noStore)
  const form = yield* formOf(ctx.request)
  return yield* perform(ctx, actions[0] ?? "", form)
})

export const accountSetupRoute: Route = {
  methods: ["POST"],
  run: (ctx) =>
    accountSetupAnswer(ctx).pipe(
      Effect.catchTags({
        BodyTooLarge: () => Effect.succeed(failure(413, M.formTooLarge, noStore)),
        BodyUnreadable: () => Effect.succeed(failure(400, M.bodyUnreadable, noStore)),
        UnsupportedMediaType: () => Effect.succeed(failure(415, M.unsupportedMediaType, noStore)),
        UnreadableForm: () => Effect.succeed(failure(400, M.formNotUtf8, noStore)),
        IpBlocked: () => Effect.succeed(failure(403, Messages.ipBlocked, noStore)),
        LinkBaseMissing: () =>
          Effect.logError("provisioning: the host has no baseUrl; refusing to build links from the Host header").pipe(
            Effect.as(failure(503, M.notConfigured, noStore))
          ),
        ...errors
      })
    )
}

// ---------------------------------------------------------------------------------------------
// The verification link's confirm page
// ---------------------------------------------------------------------------------------------

/** Headers of every answer of the page, whatever its body. */
const PAGE_BASE_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY"
} as const

const PAGE_HEADERS = {
  ...PAGE_BASE_HEADERS,
  "content-security-policy": "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
} as const

/**
 * The page's one `<style>` element is allowed by the SHA-256 of its text, so the policy needs no
 * `unsafe-inline` and no other style can apply. The stylesheet is a constant: hashed once, when
 * the module loads.
 */
const styleHash: Promise<string> = globalThis.crypto.subtle
  .digest("SHA-256", new TextEncoder().encode(Look.pageCss))
  .then((digest) => Encoding.encodeBase64(new Uint8Array(digest)))

/** The page's Content-Security-Policy: nothing but its own hashed stylesheet, forms posting back here. */
export const verifyPagePolicy: Effect.Effect<string> = Effect.promise(() => styleHash).pipe(
  Effect.map(
    (hash) =>
      `default-src 'none'; style-src 'sha256-${hash}'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`
  )
)

const page = (status: number, title: string, body: Look.Html) =>
  Effect.map(
    verifyPagePolicy,
    (policy): Reply => ({
      status,
      headers: { ...PAGE_BASE_HEADERS, "content-security-policy": policy },
      body: Look.page({ title, body })
    })
  )

const invalidPage = () =>
  page(
    400,
    "Link not valid",
    Look.markup`<p class="notice error" role="alert">This verification link is not valid, has expired or was already used.</p><p>Request a new e-mail with <code>pre-register-resend</code>, or register again.</p>`
  )

const verifyLinkAnswer = Effect.fnUntraced(function* (ctx: RouteContext) {
  if (!(yield* Provisioning.enabled)) return failure(404, M.notFound)
  if (ctx.request.method === "GET") {
    const token = paramsOf(Wire.VerifyLinkParams, ctx.url)("token")[0] ?? ""
    if (token === "" || !(yield* Provisioning.linkIsValid(token))) return yield* invalidPage()
    // Only a button: a GET verifies nothing, so mail scanners that prefetch links cannot burn it.
    return yield* page(
      200,
      "Confirm your e-mail address",
      Look.markup`<p>Confirm that this address is yours to continue setting up your Waybill account.</p><form method="post" action="./"><input type="hidden" name="token" value="${token}"><button type="submit">Confirm my e-mail address</button></form>`
    )
  }
  const form = yield* formOf(ctx.request)
  const token = form.get("token") ?? paramsOf(Wire.VerifyLinkParams, ctx.url)("token")[0] ?? ""
  if (token === "") return yield* invalidPage()
  yield* Provisioning.followLink(token)
  return yield* page(
    200,
    "E-mail address verified",
    Look.markup`<p class="notice success" role="status">Email verified.</p><p>Your e-mail address is verified. You can continue the registration.</p>`
  )
})

export const verifyLinkRoute: Route = {
  methods: ["GET", "POST"],
  methodNotAllowed: () => ({
    status: 405,
    headers: { ...PAGE_HEADERS, allow: "GET, POST" },
    body: "Method not allowed."
  }),
  run: (ctx) =>
    verifyLinkAnswer(ctx).pipe(
      Effect.catchTags({
        BodyTooLarge: () => invalidPage(),
        BodyUnreadable: () => invalidPage(),
        UnsupportedMediaType: () => invalidPage(),
        UnreadableForm: () => invalidPage(),
        ProvisioningRejected: () => invalidPage(),
        ...storageErrors
      })
    )
}
