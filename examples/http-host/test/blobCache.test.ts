import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as Effect from "effect/Effect"
import { BlobFs } from "@waybill/blob-fs"
import { blobStoreContract } from "@waybill/testkit"
import { BlobCache } from "@waybill/blob-cache"

// The port's promises hold through the cache: kept blobs answer like the store, large ones stream.
blobStoreContract("blob-cache over blob-fs", () =>
  Effect.map(
    Effect.acquireRelease(
      Effect.sync(() => mkdtempSync(join(tmpdir(), "waybill-blobcache-contract-"))),
      (root) => Effect.sync(() => rmSync(root, { recursive: true, force: true }))
    ),
    (root) => BlobCache.make(BlobFs.make(root), { maxBytes: 4 * 1024 * 1024, maxBlobBytes: 512 * 1024 })
  )
)
