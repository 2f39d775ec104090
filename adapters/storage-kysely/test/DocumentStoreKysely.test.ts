import { documentStoreContract } from "@waybill/testkit"
import { storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  documentStoreContract(`DocumentStore (storage-kysely: ${target.name})`, () => storageLayer(target))
}
