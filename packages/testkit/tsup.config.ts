import { libraryConfig } from "../../tsup.base.js"

// The HTTPS webhook receiver is its own entry (`@waybill/testkit/webhook-receiver`), so the main
// entry stays free of node:https and the certificate generator.
export default libraryConfig({ entry: ["src/index.ts", "src/webhookReceiver.ts"] })
