import { provisioningStoreContract } from "@waybill/testkit"
import { storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  provisioningStoreContract(`storage-kysely ProvisioningStore: ${target.name}`, () => storageLayer(target))
}
