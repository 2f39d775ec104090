import { libraryConfig } from "../../tsup.base.js"

// The HTTPS webhook receiver is its own entry (`@waybill/testkit/webhook-receiver`), so the main
// entry stays free of node:https and the certificate generator. ESM only: the suites import
// vitest, which refuses `require()`, so a CommonJS build could never load.
export default libraryConfig({ entry: ["src/index.ts", "src/webhookReceiver.ts"], format: ["esm"] })
