// Whether a `continue_later` check may run, judged as OpenCode 1.18.33 judges a `bash` call. The agents are the rule
// lists 1.18.33 really sends (`opencode debug agent <name>` prints the GET /agent object; a config's `permission`
// block is appended in its own order), and the texts matched are those tree-sitter-bash gives OpenCode
// (docs/research/bash-permission.md). A refusal row names the reason it expects, so a row refused for another reason
// fails too.
import { describe, expect, it } from "vitest";
import { checkPermission, wildcardMatches } from "../../src/host/bash-permission.js";

type Action = "allow" | "ask" | "deny";
const rule = (permission: string, pattern: string, action: Action) => ({ permission, pattern, action });
const PROJECT = "/work/project";
const TOOL_OUTPUT = "/home/user/.local/share/opencode/tool-output/*";

/** The rules every 1.18.33 agent starts from: every permission allowed, then the asks and denies of the defaults. */
const DEFAULTS = [
  rule("*", "*", "allow"),
  rule("doom_loop", "*", "ask"),
  rule("external_directory", "*", "ask"),
  rule("external_directory", TOOL_OUTPUT, "allow"),
  rule("external_directory", "/tmp/opencode/*", "allow"),
  rule("question", "*", "deny"),
  rule("plan_enter", "*", "deny"),
  rule("plan_exit", "*", "deny"),
  rule("read", "*", "allow"),
  rule("read", "*.env", "ask"),
  rule("read", "*.env.*", "ask"),
  rule("read", "*.env.example", "allow"),
];
/** A primary agent as GET /agent returns it, its rules after the shared start. */
const shipped = (name: string, ...rules: ReturnType<typeof rule>[]) => ({
  name,
  mode: "primary",
  native: true,
  options: {},
  permission: [...DEFAULTS, ...rules],
});
const BUILD = shipped(
  "build",
  rule("question", "*", "allow"),
  rule("plan_enter", "*", "allow"),
  rule("external_directory", TOOL_OUTPUT, "allow"),
);
const PLAN = shipped(
  "plan",
  rule("question", "*", "allow"),
  rule("plan_exit", "*", "allow"),
  rule("task", "general", "deny"),
  rule("external_directory", "/home/user/.local/share/opencode/plans/*", "allow"),
  rule("edit", "*", "deny"),
  rule("edit", ".opencode/plans/*.md", "allow"),
  rule("edit", "../../home/user/.local/share/opencode/plans/*.md", "allow"),
  rule("external_directory", TOOL_OUTPUT, "allow"),
);
/** `"agent": {"plan": {"permission": {"bash": "deny"}}}` in opencode.json. */
const PLAN_NO_BASH = {
  ...PLAN,
  permission: [
    ...PLAN.permission.slice(0, -1),
    rule("bash", "*", "deny"),
    rule("external_directory", TOOL_OUTPUT, "allow"),
  ],
};
/**
 * `"permission": {"bash": {"*": "ask", "git status*": "allow", "rm *": "deny", "npm test": "allow", "grep *": "allow",
 * "make *": "allow", "cat *": "allow"}, "external_directory": {"/data/*": "allow", "/data/secrets/*": "deny"}}`.
 */
const CAREFUL = {
  ...BUILD,
  permission: [
    ...BUILD.permission.slice(0, -1),
    rule("bash", "*", "ask"),
    rule("bash", "git status*", "allow"),
    rule("bash", "rm *", "deny"),
    rule("bash", "npm test", "allow"),
    rule("bash", "grep *", "allow"),
    rule("bash", "make *", "allow"),
    rule("bash", "cat *", "allow"),
    rule("external_directory", "/data/*", "allow"),
    rule("external_directory", "/data/secrets/*", "deny"),
    rule("external_directory", TOOL_OUTPUT, "allow"),
  ],
};
const only = (...rules: ReturnType<typeof rule>[]) => ({ name: "custom", permission: rules });

/** Allowed, or refused for the reason the row names. */
function expectVerdict(agent: object, command: string, expected: true | RegExp) {
  const verdict = checkPermission(agent, command, PROJECT);
  if (expected === true) expect(verdict).toEqual({ allowed: true });
  else expect(verdict).toMatchObject({ allowed: false, why: expect.stringMatching(expected) });
}

const NO_ASKING = /checks run only what it may run without asking$/;
const SPLIT =
  /which cannot be judged as OpenCode would: write the check as plain commands joined by \|, &&, \|\| or ;$/;

describe("OpenCode's wildcard", () => {
  it.each<[string, string, boolean]>([
    ["", "*", true],
    ["two\nlines", "*", true],
    ["git status", "git status *", true],
    ["git status --short", "git status *", true],
    ["git statusx", "git status *", false],
    ["git statusx", "git status*", true],
    ["ls", "l?", true],
    ["l", "l?", false],
    ["lss", "l?", false],
    ["axb", "a.b", false],
    ["a.b", "a.b", true],
    ["(x)+[y]", "(x)+[y]", true],
    ["a", "[ab]", false],
    ["C:/work/file", "C:\\work\\*", true],
    ["bash", "b*", true],
    ["bash", "ba", false],
    ["npm  test", "npm test", false],
  ])("%j against %j: %s", (text, pattern, expected) => {
    expect(wildcardMatches(text, pattern)).toBe(expected);
  });
});

describe("the agents OpenCode 1.18.33 ships", () => {
  it.each<[string, object, string, true | RegExp]>([
    ["build runs any command inside the project", BUILD, "npm test", true],
    ["build's rules do not ask about rm either", BUILD, "rm -rf build", true],
    ["build is asked before rm reaches /etc", BUILD, "rm -rf /etc", /would be asked before reaching \/etc .*"rm"/],
    ["build may read OpenCode's /tmp/opencode", BUILD, "cat /tmp/opencode/out.txt", true],
    ["build is asked before cat reads a sibling folder", BUILD, "cat ../other/file", /reaching \/work\/other\/file /],
    [
      "a sibling whose name starts like the project's is outside",
      BUILD,
      "mv a /work/projectile/b",
      /\/work\/projectile/,
    ],
    ["a path that climbs back inside is inside", BUILD, "cat sub/../notes.txt", true],
    ["an absolute path inside is inside", BUILD, "touch /work/project/done", true],
    ["ls is not one of the commands whose paths OpenCode checks", BUILD, "ls /etc", true],
    ["a wrapper does not hide rm's path", BUILD, "sudo rm /opt/x", /reaching \/opt\/x .*"sudo"/],
    ["nor does git", BUILD, "git mv a /tmp/b", /reaching \/tmp\/b /],
    ["an --option=path names a path", BUILD, "cp --target-directory=/etc x", /reaching \/etc /],
    ["plan also runs any command in 1.18.33", PLAN, "npm test", true],
    ["plan is asked about the same folders", PLAN, "cat ../x", /the agent "plan" would be asked before reaching/],
    ["plan with bash denied in opencode.json", PLAN_NO_BASH, "npm test", /the agent "plan" may not run "npm test"/],
  ])("%s: %s", (_, agent, command, expected) => expectVerdict(agent, command, expected));
});

describe("an agent whose bash rules were configured", () => {
  it.each<[string, object, string, true | RegExp]>([
    ["an allowed command", CAREFUL, "git status", true],
    ["a pattern without a space before * also takes arguments", CAREFUL, "git status --short", true],
    [
      "a command the rules ask about",
      CAREFUL,
      "git push",
      /the agent "build" would be asked before running "git push"/,
    ],
    ["a denied command", CAREFUL, "rm -rf build", /the agent "build" may not run "rm -rf build"/],
    ["one part of && that asks", CAREFUL, "git status && git push", /before running "git push"/],
    ["one part of a pipeline that asks", CAREFUL, "npm test | tee log", /before running "tee log"/],
    ["both sides of || allowed", CAREFUL, "npm test || git status", true],
    ["the text is the source as written", CAREFUL, "npm  test", /before running "npm  test"/],
    ["leading assignments are part of the text", CAREFUL, "CI=1 make check", /before running "CI=1 make check"/],
    ["! stands outside the text", CAREFUL, "! grep -q error build.log", true],
    ["quotes stay in the text", CAREFUL, "grep -q 'all passed' build.log", true],
    ["a folder the rules allow", CAREFUL, "cat /data/reports/today.txt", true],
    ["a folder the rules deny", CAREFUL, "cat /data/secrets/key", /may not reach \/data\/secrets\/key /],
    ["the folder itself may be the one asked about", CAREFUL, "cat /data", /would be asked before reaching \/ /],
  ])("%s: %s", (_, agent, command, expected) => expectVerdict(agent, command, expected));
});

describe("how the rules are matched", () => {
  const allowGit = rule("bash", "git *", "allow");
  const denyPush = rule("bash", "git push*", "deny");
  it.each<[string, object, string, true | RegExp]>([
    ["the last matching rule wins (deny last)", only(allowGit, denyPush), "git push", /may not run "git push"/],
    ["the last matching rule wins (allow last)", only(denyPush, allowGit), "git push", true],
    ["no matching rule: OpenCode asks", only(rule("edit", "*", "allow")), "ls", /would be asked before running "ls"/],
    ["no rules at all: OpenCode asks", only(), "ls", /would be asked before running "ls"/],
    ["a later rule for every permission", only(allowGit, rule("*", "*", "ask")), "git log", /asked before running/],
    ["a permission wildcard names bash too", only(rule("ba*", "*", "allow")), "git log", true],
    [
      "a redirection is judged with its command",
      only(rule("*", "*", "allow"), rule("bash", "*>*", "ask")),
      "ls 2>/dev/null",
      /"ls 2>\/dev\/null"/,
    ],
    [
      "and without it, as after && OpenCode sees it",
      only(rule("*", "*", "allow"), rule("bash", "ls", "ask")),
      "ls >/dev/null 2>&1",
      /before running "ls"/,
    ],
    ["output sent to another descriptor", only(rule("bash", "*", "allow")), "make 2>&1 | grep -q ok", true],
  ])("%s: %s", (_, agent, command, expected) => expectVerdict(agent, command, expected));

  it("appends the session's rules to the agent's, as OpenCode does", () => {
    expect(checkPermission(BUILD, "npm test", PROJECT, { id: "ses_1", title: "t" })).toEqual({ allowed: true });
    const session = { id: "ses_1", permission: [rule("bash", "*", "deny")] };
    expect(checkPermission(BUILD, "npm test", PROJECT, session)).toMatchObject({
      allowed: false,
      why: expect.stringMatching(/may not run "npm test"/),
    });
  });
});

describe("what the plain splitter will not read", () => {
  it.each<[string, RegExp]>([
    ["echo $(rm -rf /)", /uses \$/],
    ["echo $HOME", /uses \$/],
    ['echo "$HOME"', /uses \$ inside double quotes/],
    ["echo `id`", /backtick/],
    ["(make && make test)", /parentheses/],
    ["cat <<EOF", /here-document/],
    ["diff <(ls a) <(ls b)", /process substitution/],
    ["grep x < file", /reads a file by redirection/],
    ["ls > out.txt", /redirects output to a file/],
    ["ls >& out.txt", /redirects output with >&/],
    ["ls &>/dev/null", /uses &>/],
    ["sleep 1 &", /background/],
    ["ls\nrm -rf build", /more than one line/],
    ["echo 'unclosed", /never closed/],
    ["echo {a,b}", /braces/],
    ["ls # a comment", /comment/],
    ["ls | ! grep x", /uses !/],
    ["echo hi!", /uses !/],
    ["ls |", /ends without a command/],
    ["&& ls", /empty command before &&/],
    ["echo x\\", /ends with a backslash/],
    ["ls >/dev/null extra", /words after a redirection/],
    [">/dev/null ls", /redirects before its command/],
  ])("%j", (command, reason) => {
    const verdict = checkPermission(BUILD, command, PROJECT);
    expect(verdict).toMatchObject({ allowed: false, why: expect.stringMatching(reason) });
    expect(verdict).toMatchObject({ why: expect.stringMatching(SPLIT) });
  });

  it.each<[string, RegExp]>([
    ["eval ls", /uses "eval", which runs code that no permission rule sees/],
    ["command eval ls", /uses "eval"/],
    ["source ./env.sh", /uses "source"/],
    [". ./env.sh", /uses "\."/],
    ["bash -c 'rm -rf build'", /runs a string as shell code with "bash"/],
    ["env sh -ec ls", /runs a string as shell code with "sh"/],
    ["if true; then ls; fi", /the shell keyword "if"/],
    ["[[ -f done ]]", /the shell keyword "\[\["/],
    ["CI=1", /only sets variables/],
    ["cd web && npm test", /changes folder with "cd".*name each path inside the project plainly$/],
    ["rm *.log", /"rm" a path with a wildcard \(\*\.log\)/],
    ["cat ~/notes", /"cat" a path in a home folder/],
  ])("%j", (command, reason) => {
    expect(checkPermission(BUILD, command, PROJECT)).toMatchObject({
      allowed: false,
      why: expect.stringMatching(reason),
    });
  });

  it("reads the plain shapes it does accept", () => {
    for (const command of ["ls;", "test -f dist/index.js && ! test -e .lock", '[ -f "a b" ]', 'grep -q "a\\"b" f']) {
      expect(checkPermission(BUILD, command, PROJECT)).toEqual({ allowed: true });
    }
  });
});

describe("what it cannot judge", () => {
  it.each<[string, unknown, string, unknown]>([
    ["an agent without rules", { name: "build" }, PROJECT, undefined],
    ["the rules of servers before 1.18", { name: "build", permission: { bash: "allow" } }, PROJECT, undefined],
    [
      "a rule of an unknown action",
      only(rule("bash", "*", "allow"), { ...rule("x", "*", "ask"), action: "maybe" } as never),
      PROJECT,
      undefined,
    ],
    ["a session whose rules are not a list", BUILD, PROJECT, { permission: { bash: "allow" } }],
  ])("%s", (_, agent, project, session) => {
    expect(checkPermission(agent, "ls", project, session)).toMatchObject({
      allowed: false,
      why: expect.stringMatching(/could not be read, so checks run only what it may run without asking$/),
    });
  });

  it("a project folder that is not absolute, and an empty check", () => {
    expect(checkPermission(BUILD, "ls", "project")).toMatchObject({
      why: expect.stringMatching(/project folder is not known/),
    });
    expect(checkPermission(BUILD, "  ", PROJECT)).toMatchObject({ why: expect.stringMatching(/the check is empty/) });
  });

  it("names the agent and the command in one sentence the model can act on", () => {
    expect(checkPermission(CAREFUL, "rm -rf build", PROJECT)).toEqual({
      allowed: false,
      why: 'the agent "build" may not run "rm -rf build": checks run only what it may run without asking',
    });
    expect(checkPermission(CAREFUL, "git push", PROJECT)).toMatchObject({ why: expect.stringMatching(NO_ASKING) });
  });
});
