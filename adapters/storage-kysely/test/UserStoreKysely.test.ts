import { userStoreContract } from "@waybill/testkit"
import { storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  userStoreContract(`storage-kysely UserStore: ${target.name}`, () => storageLayer(target))
}
