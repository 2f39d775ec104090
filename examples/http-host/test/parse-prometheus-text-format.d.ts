declare module "parse-prometheus-text-format" {
  /** One metric family as the parser reads it: plain samples, or a histogram's buckets. */
  export interface ParsedFamily {
    readonly name: string
    readonly help: string
    readonly type: "COUNTER" | "GAUGE" | "HISTOGRAM" | "SUMMARY" | "UNTYPED"
    readonly metrics: ReadonlyArray<{
      readonly value?: string
      readonly labels?: Readonly<Record<string, string>>
      readonly buckets?: Readonly<Record<string, string>>
      readonly count?: string
      readonly sum?: string
    }>
  }
  const parse: (text: string) => Array<ParsedFamily>
  export default parse
}
