/**
 * @module optional
 *
 * The host loads the parts a server may never use (the PostgreSQL driver, the Prometheus page)
 * the first time it needs them, not at start-up: each is code and data the process would
 * otherwise hold for its whole life (docs/benchmarks.md, "Memory at rest (2026-11-28, session
 * 11)"). What is loaded late must fail as clearly as an import at start-up would, at the moment
 * it is needed.
 */

/** The package a failed `import()` could not find, when that is why it failed. */
const missingPackage = (error: unknown): string | undefined => {
  const { code, message } = (error ?? {}) as { readonly code?: unknown; readonly message?: unknown }
  if (code !== "ERR_MODULE_NOT_FOUND" && code !== "MODULE_NOT_FOUND") return undefined
  return typeof message === "string" ? /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1] : undefined
}

/**
 * Runs `load` (an `import()` of the package `name`) for `purpose`. A package that is not
 * installed rejects with an error naming the purpose, the package and how to install it; any
 * other failure (the package's own start-up error) is passed on as it is.
 */
export const loadOptional = async <M>(purpose: string, name: string, load: () => Promise<M>): Promise<M> => {
  try {
    return await load()
  } catch (error) {
    const missing = missingPackage(error)
    if (missing === undefined) throw error
    throw new Error(
      `${purpose} needs the package ${name}, which could not be loaded (${missing} is not installed): ` +
        `install it beside Waybill (npm install ${name})`,
      { cause: error }
    )
  }
}

/**
 * `load` run once, on the first call, and its promise shared by every caller. A load that fails
 * is tried again on the next call rather than answering every later call with the same failure.
 */
export const once = <M>(load: () => Promise<M>): (() => Promise<M>) => {
  let loading: Promise<M> | undefined
  return () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined
      throw error
    })
    return loading
  }
}
