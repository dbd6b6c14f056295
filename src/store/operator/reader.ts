// Raw SQL for what operators read (the CLI, the TUI panel): the same query text on both backends, written with `?`
// placeholders and in the SQL both dialects share.
export interface SqlReader {
  readonly dialect: "sqlite" | "postgresql";
  all<T = Record<string, unknown>>(text: string, ...params: unknown[]): Promise<T[]>;
}
