/**
 * The shapes of a bench scenario, apart from the registry (scenarios.ts) so that scenario
 * modules (documentScenarios.ts) and the registry can both use them without a cycle.
 */
import type { TargetName } from "./target.js"

/** What the orchestrator knows about a started target. */
export interface Session {
  readonly url: string
  readonly apiKey: string
}

/** One request, sent identically (apart from the credential) to every target. */
export interface RequestSpec {
  readonly method: "GET" | "POST"
  /** Path and query, e.g. `/api/v1/order/json/`. */
  readonly path: string
  readonly headers: Readonly<Record<string, string>>
  readonly body?: string
}

export interface Scenario {
  readonly name: string
  readonly description: string
  /** Optional setup through the target's API before the request is built (none for booking). */
  readonly prepare?: (session: Session) => Promise<void>
  readonly request: (session: Session) => RequestSpec
  /** Problems with one answer (empty when right): status, envelope and payload shape. */
  readonly check: (status: number, body: unknown) => ReadonlyArray<string>
  /** Per-answer check during the load; must be cheap (it runs in the load generator's thread). */
  readonly quickCheck: (body: string) => boolean
  /** Rows each successful answer writes, by kind (matched against the target's `rowCounts`). */
  readonly writesPerRequest: Readonly<Record<string, number>>
  /** The targets that implement this request (default: all of them). */
  readonly targets?: ReadonlyArray<TargetName>
  /**
   * `postgres`: each measurement runs on a fresh PostgreSQL database (postgres.ts) instead of a
   * SQLite file, and the floor is the PostgreSQL one (floorPg.ts). Default: SQLite.
   */
  readonly database?: "sqlite" | "postgres"
  /**
   * Server processes per target, all on the same database, the load split evenly across them
   * (autocannon's connections go to the hosts in turn). Default 1; more than one needs PostgreSQL.
   */
  readonly hosts?: number
}
