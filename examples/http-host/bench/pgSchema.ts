/**
 * Waybill's schema on a bench database, for the PostgreSQL floor (floorPg.ts), which runs on it
 * but must not load Waybill itself: the orchestrator (and bench.test.ts) migrate the fresh
 * database before the floor starts. Waybill's own host migrates at start as usual.
 */
import * as Effect from "effect/Effect"
import pg from "pg"
import { migrate, postgresEngine } from "@waybill/storage-kysely"

/** Applies Waybill's migrations to the database at `url`. */
export const migrateBenchDatabase = async (url: string): Promise<void> => {
  const engine = postgresEngine(new pg.Pool({ connectionString: url, max: 2 }))
  try {
    await Effect.runPromise(migrate(engine))
  } finally {
    await engine.close()
  }
}
