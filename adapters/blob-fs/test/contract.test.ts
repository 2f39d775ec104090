import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { blobStoreContract } from "@waybill/testkit"
import { BlobFs } from "../src/index.js"

blobStoreContract("blob-fs", () =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "waybill-blobfs-contract-"))),
      (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
    ),
    (root) => BlobFs.make(root)
  )
)
