// A shell check split into its simple commands the way tree-sitter-bash finds them in OpenCode 1.18.33, or why it
// will not be: only the plain shape (simple commands joined by |, &&, || and ;, quoted words, output thrown to
// /dev/null) is read; anything where our split could differ from OpenCode's is refused rather than guessed.
// bash-permission.ts judges the commands it gives.

/** One word as the shell will see it: where it stands in the source, and its text once the quotes are gone. */
export interface Word {
  start: number;
  end: number;
  value: string;
}

export interface SimpleCommand {
  words: Word[];
  /** Where its trailing redirections end, when it has any. */
  redirectEnd?: number;
}

/** A redirection starts here: `>`, or a descriptor number written against it (`2>`). */
const REDIRECT = /[0-9]*>/y;
const META = new Set(["|", "&", ";", "<", ">", "(", ")"]);
const isBlank = (char: string | undefined) => char === " " || char === "\t";
const endsWord = (char: string | undefined) => char === undefined || isBlank(char) || META.has(char);

/** Reads one word from `at`; the whole check is refused at the first character we will not interpret. */
function readWord(source: string, at: number): { word: Word } | { refused: string } {
  const word: Word = { start: at, end: at, value: "" };
  let i = at;
  while (!endsWord(source[i])) {
    const char = source[i]!;
    if (char === "'") {
      const close = source.indexOf("'", i + 1);
      if (close < 0) return { refused: "has a quote that is never closed" };
      word.value += source.slice(i + 1, close);
      i = close + 1;
      continue;
    }
    if (char === '"') {
      const read = readDoubleQuoted(source, i + 1);
      if ("refused" in read) return read;
      word.value += read.value;
      i = read.end;
      continue;
    }
    if (char === "\\") {
      if (i + 1 >= source.length) return { refused: "ends with a backslash" };
      word.value += source[i + 1];
      i += 2;
      continue;
    }
    if (char === "$") return { refused: "uses $ (a variable, a substitution or arithmetic)" };
    if (char === "`") return { refused: "uses a backtick command substitution" };
    if (char === "{" || char === "}") return { refused: "uses braces (a group or a brace expansion)" };
    if (char === "#" && i === at) return { refused: "has a comment" };
    // A lone `!` may negate a whole command (split decides); inside a word, shells read it differently.
    if (char === "!" && (i > at || !endsWord(source[i + 1])))
      return { refused: "uses ! other than before a whole command" };
    word.value += char;
    i++;
  }
  word.end = i;
  return { word };
}

/** The inside of "…" from `at`: a `$` or backtick there would still expand, so it is refused. */
function readDoubleQuoted(source: string, at: number): { value: string; end: number } | { refused: string } {
  let value = "";
  for (let i = at; i < source.length; i++) {
    const char = source[i]!;
    if (char === '"') return { value, end: i + 1 };
    if (char === "$") return { refused: "uses $ inside double quotes (a variable or a substitution)" };
    if (char === "`") return { refused: "uses a backtick command substitution" };
    if (char === "\\" && i + 1 < source.length && '"\\$`'.includes(source[i + 1]!)) {
      value += source[i + 1];
      i++;
      continue;
    }
    value += char;
  }
  return { refused: "has a quote that is never closed" };
}

/**
 * A redirection from `at` (the `>` or the descriptor before it). Only output thrown away or sent to another
 * descriptor is taken: `>/dev/null`, `2>>/dev/null`, `2>&1`, `>&2`. Those touch no file of the person's.
 */
function readRedirect(source: string, at: number): { end: number } | { refused: string } {
  let i = at;
  while (/[0-9]/.test(source[i] ?? "")) i++;
  i++; // the ">"
  if (source[i] === "&") {
    let end = i + 1;
    while (/[0-9]/.test(source[end] ?? "")) end++;
    if (end === i + 1) return { refused: "redirects output with >& to something other than a descriptor number" };
    return { end };
  }
  if (source[i] === "|") return { refused: "uses >|" };
  if (source[i] === ">") i++;
  while (isBlank(source[i])) i++;
  const read = readWord(source, i);
  if ("refused" in read) return read;
  if (read.word.value !== "/dev/null") {
    return { refused: "redirects output to a file (only /dev/null is accepted)" };
  }
  return { end: read.word.end };
}

/** Why an operator character at `at` is refused, or the operator it is. */
function readOperator(source: string, at: number): { op: string } | { refused: string } {
  const two = source.slice(at, at + 2);
  if (two === "&&" || two === "||") return { op: two };
  if (two === "|&") return { refused: "uses |&" };
  if (two === ";;") return { refused: "uses ;;" };
  if (two === "&>") return { refused: "uses &>, which not every shell reads alike (write >/dev/null 2>&1)" };
  const char = source[at]!;
  if (char === "|" || char === ";") return { op: char };
  if (char === "&") return { refused: "runs something in the background with &" };
  if (char === "(" || char === ")") return { refused: "uses parentheses (a subshell, a group or a substitution)" };
  if (two === "<<") return { refused: "uses a here-document or a here-string" };
  if (two === "<(") return { refused: "uses process substitution" };
  return { refused: "reads a file by redirection with <" };
}

/**
 * Splits a check into its simple commands as tree-sitter-bash would find them, or says why it will not. `!` before
 * a pipeline is kept out of the command's text, as OpenCode's `negated_command` node keeps it out.
 */
export function split(source: string): { commands: SimpleCommand[] } | { refused: string } {
  if (/[\u0000-\u0008\n-\u001f\u007f]/.test(source))
    return { refused: "spans more than one line or holds a control character" };
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [] };
  let afterPipe = false;
  let negated = false;
  const close = (op: string): string | undefined => {
    if (current.words.length === 0) return `has an empty command before ${op}`;
    commands.push(current);
    current = { words: [] };
    return undefined;
  };
  let i = 0;
  while (i < source.length) {
    const char = source[i]!;
    if (isBlank(char)) {
      i++;
      continue;
    }
    REDIRECT.lastIndex = i;
    if (REDIRECT.test(source)) {
      if (current.words.length === 0) return { refused: "redirects before its command" };
      const read = readRedirect(source, i);
      if ("refused" in read) return read;
      current.redirectEnd = read.end;
      i = read.end;
      continue;
    }
    if (META.has(char)) {
      const read = readOperator(source, i);
      if ("refused" in read) return read;
      const problem = close(read.op);
      if (problem) return { refused: problem };
      afterPipe = read.op === "|";
      negated = false;
      i += read.op.length;
      continue;
    }
    const read = readWord(source, i);
    if ("refused" in read) return read;
    const { word } = read;
    const raw = source.slice(word.start, word.end);
    if (raw === "!" && current.words.length === 0 && !afterPipe && !negated) {
      negated = true;
      i = word.end;
      continue;
    }
    if (raw === "!") return { refused: "uses ! other than before a whole command" };
    if (current.redirectEnd !== undefined) return { refused: "has words after a redirection" };
    current.words.push(word);
    i = word.end;
  }
  if (current.words.length > 0) commands.push(current);
  else if (commands.length === 0 || negated || afterPipe || !/;\s*$/.test(source))
    return { refused: "ends without a command" };
  return { commands };
}
