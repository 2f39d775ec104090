/**
 * Each target's module, loaded lazily so a floor child never imports Waybill (its peak RSS
 * would otherwise include Effect, Kysely and the ZIP dataset). Kept apart from target.ts, which
 * the target modules import for their types.
 */
import type { StartTarget, TargetName } from "./target.js"

export const loadTarget = async (name: TargetName, postgres = false): Promise<StartTarget> => {
  switch (name) {
    case "waybill":
      return (await import("./waybill.js")).startWaybill
    case "floor":
      return postgres ? (await import("./floorPg.js")).startFloorPg : (await import("./floor.js")).startFloor
    case "ceiling":
      return (await import("./ceiling.js")).startCeiling
  }
}
