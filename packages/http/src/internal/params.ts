/**
 * Reading query parameters through the wire schema that documents them (`openapi/wire.ts`): a
 * route can only ask for a name its schema lists, so the OpenAPI document names every parameter
 * a route reads. (Names core asks for itself, such as the quote's, are pinned by
 * `test/openapi.test.ts`.)
 */
import type * as Schema from "effect/Schema"

/** Every value of each documented parameter of `url`. */
export const paramsOf =
  <F extends Schema.Struct.Fields>(_schema: Schema.Struct<F>, url: URL) =>
  (name: keyof F & string): ReadonlyArray<string> =>
    url.searchParams.getAll(name)
