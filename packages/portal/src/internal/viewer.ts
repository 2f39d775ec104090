/**
 * @module viewer
 *
 * The signed-in user every portal page receives: core's `User.Viewer`, re-exported so the
 * portal's modules import it from one place.
 */
export type { Role, Viewer } from "@waybill/core"
