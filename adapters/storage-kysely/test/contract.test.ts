import { storageContract } from "@waybill/testkit"
import { storageLayer, targets } from "./dialects.js"

for (const target of targets) {
  storageContract(`storage-kysely: ${target.name}`, () => storageLayer(target))
}
