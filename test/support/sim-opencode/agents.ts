// The agent list (`GET /agent`) of OpenCode 1.18.33 as the e2e servers configure it (`permission: {"*": "allow"}`):
// the seven native agents, each with its permission rules in order (the last matching rule wins), rendered once per
// home folder. Prompts are shortened: their type is what a caller depends on, not their text.

type Rule = [permission: string, pattern: string, action: "allow" | "deny" | "ask"];

function baseRules(home: string): Rule[] {
  return [
    ["*", "*", "allow"],
    ["doom_loop", "*", "ask"],
    ["external_directory", "*", "ask"],
    ["external_directory", `${home}/data/opencode/tool-output/*`, "allow"],
    ["external_directory", `${home}/../tmp/opencode/*`, "allow"],
    ["question", "*", "deny"],
    ["plan_enter", "*", "deny"],
    ["plan_exit", "*", "deny"],
    ["read", "*", "allow"],
    ["read", "*.env", "ask"],
    ["read", "*.env.*", "ask"],
    ["read", "*.env.example", "allow"],
  ];
}

interface AgentSpec {
  name: string;
  description?: string;
  mode: "primary" | "subagent";
  hidden?: true;
  temperature?: number;
  prompt?: string;
  rules: (home: string) => Rule[];
}

const SPECS: AgentSpec[] = [
  {
    name: "build",
    description: "The default agent. Executes tools based on configured permissions.",
    mode: "primary",
    rules: () => [
      ["question", "*", "allow"],
      ["plan_enter", "*", "allow"],
    ],
  },
  { name: "compaction", mode: "primary", hidden: true, prompt: "You are a context summarization agent.", rules: deny },
  {
    name: "explore",
    description: "Fast agent specialized for exploring codebases.",
    mode: "subagent",
    prompt: "You are a file search specialist.",
    rules: (home) => [
      ["*", "*", "deny"],
      ...(["grep", "glob", "list", "bash", "webfetch", "websearch", "read"].map((p) => [p, "*", "allow"]) as Rule[]),
      ...baseRules(home).slice(2, 5),
    ],
  },
  {
    name: "general",
    description: "General-purpose agent for researching complex questions and executing multi-step tasks.",
    mode: "subagent",
    rules: () => [["todowrite", "*", "deny"]],
  },
  {
    name: "plan",
    description: "Plan mode. Disallows all edit tools.",
    mode: "primary",
    rules: (home) => [
      ["question", "*", "allow"],
      ["plan_exit", "*", "allow"],
      ["task", "general", "deny"],
      ["external_directory", `${home}/data/opencode/plans/*`, "allow"],
      ["edit", "*", "deny"],
      ["edit", ".opencode/plans/*.md", "allow"],
      ["edit", `${home.slice(1)}/data/opencode/plans/*.md`, "allow"],
    ],
  },
  {
    name: "summary",
    mode: "primary",
    hidden: true,
    prompt: "Summarize what was done in this conversation.",
    rules: deny,
  },
  {
    name: "title",
    mode: "primary",
    hidden: true,
    temperature: 0.5,
    prompt: "You are a title generator.",
    rules: deny,
  },
];

function deny(): Rule[] {
  return [["*", "*", "deny"]];
}

/** The JSON of `GET /agent` for a server whose OpenCode home is `home`. */
export function agentsJson(home: string): string {
  const configured: Rule[] = [
    ["*", "*", "allow"],
    ["external_directory", `${home}/data/opencode/tool-output/*`, "allow"],
  ];
  const agents = SPECS.map(({ rules, ...spec }) => ({
    ...spec,
    native: true,
    permission: [...baseRules(home), ...rules(home), ...configured].map(([permission, pattern, action]) => ({
      permission,
      pattern,
      action,
    })),
    options: {},
  }));
  return JSON.stringify(agents);
}
