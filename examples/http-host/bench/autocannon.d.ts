/**
 * The slice of autocannon 8's programmatic API the bench uses (the package ships no types and
 * `@types/autocannon` is not a dependency). Field names follow autocannon's `lib/run.js` and
 * `lib/aggregateResult.js`; latencies are milliseconds.
 */
declare module "autocannon" {
  export interface Options {
    /** One URL, or several: connection i goes to url[i % n]. */
    readonly url: string | ReadonlyArray<string>
    readonly connections?: number
    /** Seconds. */
    readonly duration?: number
    readonly pipelining?: number
    /** Seconds before a request counts as timed out. */
    readonly timeout?: number
    readonly method?: string
    readonly headers?: Readonly<Record<string, string>>
    readonly body?: string | Buffer
    /** Called with each response body; a falsy answer counts as a mismatch. */
    readonly verifyBody?: (body: string) => boolean
    readonly title?: string
  }

  export interface Histogram {
    readonly average: number
    readonly mean: number
    readonly stddev: number
    readonly min: number
    readonly max: number
    readonly total: number
    readonly p50: number
    readonly p90: number
    readonly p97_5: number
    readonly p99: number
  }

  export interface Result {
    readonly title?: string
    readonly url: string
    readonly connections: number
    /** Seconds actually run. */
    readonly duration: number
    readonly errors: number
    readonly timeouts: number
    readonly mismatches: number
    readonly non2xx: number
    readonly resets: number
    readonly "2xx": number
    readonly statusCodeStats: Readonly<Record<string, { readonly count: number }>>
    readonly latency: Histogram
    readonly requests: Histogram & { readonly sent: number }
    readonly throughput: Histogram
  }

  export interface Instance extends Promise<Result> {
    stop(): void
  }

  function autocannon(options: Options): Instance
  export default autocannon
}
