// Whether an OpenCode agent may edit or write files, read from its permission rules. OpenCode 1.18.33 sends a list
// of `{permission, pattern, action}` rules where the last rule matching a permission wins; a last matching `edit`
// rule with pattern `*` and action `deny` removes the edit, write and patch tools. Older servers sent
// `permission.edit` and a `tools` map; both shapes are understood.

function wildcard(pattern: string): RegExp {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replace(/\*/g, ".*")
    .replace(/\?/g, ".");
  return new RegExp(`^${escaped}$`);
}

export function agentCanWrite(agent: unknown): boolean | undefined {
  if (!agent || typeof agent !== "object") return undefined;
  const { permission, tools } = agent as { permission?: unknown; tools?: unknown };
  if (tools && typeof tools === "object" && !Array.isArray(tools)) {
    const t = tools as Record<string, unknown>;
    if (t.write === false || t.edit === false) return false;
  }
  if (Array.isArray(permission)) {
    let last: { pattern?: unknown; action?: unknown } | undefined;
    for (const rule of permission) {
      if (!rule || typeof rule !== "object") continue;
      const name = (rule as { permission?: unknown }).permission;
      if (typeof name === "string" && wildcard(name).test("edit")) last = rule as typeof last;
    }
    if (!last) return true;
    return !(last.pattern === "*" && last.action === "deny");
  }
  if (permission && typeof permission === "object") {
    const edit = (permission as Record<string, unknown>).edit;
    if (edit === "deny") return false;
    if (typeof edit === "string") return true;
  }
  return undefined;
}
