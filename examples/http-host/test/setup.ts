/** Runs before every test file of this project (vitest `setupFiles`). */
import { installApiSchemaCheck } from "./apiSchema.js"

installApiSchemaCheck()
