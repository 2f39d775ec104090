import { webhookStoreContract } from "@waybill/testkit"
import { storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  webhookStoreContract(`storage-kysely WebhookStore: ${target.name}`, () => storageLayer(target))
}
