/**
 * Sending one logical request: attempts, exponential backoff with full jitter, `Retry-After`,
 * a per-attempt timeout. Only `fetch`, `AbortController` and `setTimeout`: it runs in Node, Deno,
 * Bun and browsers.
 *
 * What is retried (and why it is safe):
 * - no answer at all (the connection failed or the attempt timed out), and HTTP 503: the server
 *   stored nothing for a 5xx, so the same request can run again;
 * - HTTP 409 "A request with this Idempotency-Key is in progress.": the first attempt is still
 *   running; the key guarantees the retry either replays its answer or runs nothing.
 * Never any other 4xx (a 429 is the caller's limit: slowing down is their decision), nor 502
 * (a cancel the courier's system refused), nor a request that is not safe to repeat (see
 * {@link RequestPolicy.retry}).
 */
import { IdempotencyMessages, retryAfterSeconds, WaybillNetworkError } from "./errors.js"

/** How many times, and how patiently, a call is retried. */
export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1 turns retries off). */
  readonly maxAttempts?: number
  /** The backoff's first step in milliseconds (default 250): attempt n waits up to base * 2^(n-1). */
  readonly baseDelayMs?: number
  /** The backoff's cap in milliseconds (default 10 000). */
  readonly maxDelayMs?: number
  /**
   * The longest `Retry-After` the client waits for, in milliseconds (default 60 000). A server
   * asking for longer gets its answer returned to the caller instead of a silent long wait.
   */
  readonly maxRetryAfterMs?: number
}

/** What the transport needs from its environment; tests replace each part. */
export interface Runtime {
  readonly fetch: (request: Request) => Promise<Response>
  /** Waits `ms`, or rejects with the signal's reason when it aborts first. */
  readonly sleep: (ms: number, signal: AbortSignal | undefined) => Promise<void>
  /** A number in [0, 1) for the jitter. */
  readonly random: () => number
}

/** How one request may be sent. */
export interface RequestPolicy {
  /** Whether repeating the request is safe (it changes nothing, or it carries an Idempotency-Key). */
  readonly retry: boolean
  /** Per-attempt timeout in milliseconds; `undefined` waits as long as fetch does. */
  readonly timeoutMs: number | undefined
}

export const defaultRetry: Required<RetryOptions> = {
  maxAttempts: 4,
  baseDelayMs: 250,
  maxDelayMs: 10_000,
  maxRetryAfterMs: 60_000
}

/** `setTimeout` that an abort cuts short. */
export const sleep = (ms: number, signal: AbortSignal | undefined): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal!.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort)
      resolve()
    }, ms)
    signal?.addEventListener("abort", onAbort, { once: true })
  })

/** Full jitter: a uniform wait in [0, min(cap, base * 2^(retry-1))), retry counted from 1. */
export const backoffDelay = (retry: number, options: Required<RetryOptions>, random: () => number): number =>
  Math.floor(random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (retry - 1)))

/** Does this answer ask for the same request again? */
const retryableAnswer = async (request: Request, response: Response): Promise<boolean> => {
  if (response.status === 503) return true
  if (response.status !== 409 || !request.headers.has("idempotency-key")) return false
  try {
    const body = (await response.clone().json()) as { error?: { message?: unknown } } | null
    return body?.error?.message === IdempotencyMessages.inProgress
  } catch {
    return false
  }
}

/** An attempt's signal: the caller's, plus the attempt's own timeout. */
const attemptSignal = (caller: AbortSignal, timeoutMs: number | undefined) => {
  const controller = new AbortController()
  const abort = () => controller.abort(caller.reason)
  if (caller.aborted) abort()
  else caller.addEventListener("abort", abort, { once: true })
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => controller.abort(new WaybillTimeout(`No answer within ${timeoutMs} ms.`)), timeoutMs)
  return {
    signal: controller.signal,
    // The caller's abort stays linked: it must still cut short the reading of the answer's body.
    done: () => {
      if (timer !== undefined) clearTimeout(timer)
    }
  }
}

/** The reason an attempt was aborted by its timeout (a network error: retried when safe). */
class WaybillTimeout extends Error {
  override readonly name = "TimeoutError"
}

/**
 * Sends `request` under `policy`, returning the last answer (successful or not) or throwing
 * {@link WaybillNetworkError} when no attempt got one. The caller's abort (the request's own
 * signal) ends the call at once with the signal's reason, between attempts too.
 *
 * The same bytes go out on every attempt (each attempt sends a clone of `request`), which is
 * what an `Idempotency-Key` fingerprint needs.
 */
export const send = async (
  request: Request,
  policy: RequestPolicy,
  retry: Required<RetryOptions>,
  runtime: Runtime
): Promise<Response> => {
  const caller = request.signal
  const attempts = policy.retry ? Math.max(1, Math.floor(retry.maxAttempts)) : 1
  for (let attempt = 1; ; attempt++) {
    const { signal, done } = attemptSignal(caller, policy.timeoutMs)
    let response: Response
    try {
      response = await runtime.fetch(new Request(request.clone(), { signal }))
    } catch (cause) {
      if (caller.aborted) throw caller.reason
      if (attempt >= attempts) {
        throw new WaybillNetworkError({
          message: `${request.method} ${new URL(request.url).pathname} got no answer after ${attempt} attempt(s).`,
          attempts: attempt,
          cause
        })
      }
      await runtime.sleep(backoffDelay(attempt, retry, runtime.random), caller)
      continue
    } finally {
      done()
    }
    if (attempt >= attempts || !(await retryableAnswer(request, response))) return response
    const asked = retryAfterSeconds(response.headers.get("retry-after"))
    const delay = asked === undefined ? backoffDelay(attempt, retry, runtime.random) : asked * 1000
    if (delay > retry.maxRetryAfterMs) return response
    // The body is not read: release the connection before waiting.
    await response.body?.cancel().catch(() => undefined)
    await runtime.sleep(delay, caller)
  }
}
