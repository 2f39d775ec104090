import { RateLimits } from "@waybill/core"
import { rateLimiterContract } from "../src/index.js"

// Core's in-process store; the SQL store runs the same suite in @waybill/storage-kysely.
rateLimiterContract("RateLimits.memory", () => RateLimits.memory)
