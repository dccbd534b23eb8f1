// PDDL for the workbench's editor: colours (a StreamLanguage), indentation, folding, and the
// names a domain and its problem declare (predicates, functions, actions, types, objects), each
// with where it is declared and used: for hover, go to definition, completion and rename.
import { StreamLanguage, foldService, indentService } from "@codemirror/language";

const KEYWORDS = new Set([
  "define", "domain", "problem", "and", "or", "not", "imply", "when", "forall", "exists",
  "increase", "decrease", "assign", "scale-up", "scale-down", "either",
]);

export const pddlLanguage = StreamLanguage.define({
  name: "pddl",
  startState: () => ({ depth: 0 }),
  token(stream, state) {
    if (stream.eatSpace()) return null;
    const next = stream.peek();
    if (next === ";") {
      stream.skipToEnd();
      return "comment";
    }
    if (next === "(") {
      stream.next();
      state.depth += 1;
      return "paren";
    }
    if (next === ")") {
      stream.next();
      state.depth = Math.max(0, state.depth - 1);
      return "paren";
    }
    stream.eatWhile(/[^\s();]/);
    const word = stream.current().toLowerCase();
    if (word.startsWith(":")) return "keyword";
    if (word.startsWith("?")) return "variableName";
    if (/^-?\d+(\.\d+)?$/.test(word)) return "number";
    if (word === "-") return "operator";
    if (KEYWORDS.has(word)) return "keyword";
    return "name";
  },
  indent: (state, textAfter, context) => Math.max(0, state.depth - (/^\)/.test(textAfter) ? 1 : 0)) * context.unit,
  languageData: { commentTokens: { line: ";" }, closeBrackets: { brackets: ["("] }, indentOnInput: /^\s*\)$/ },
  tokenTable: { paren: null },
});

// -- the words of a text, with their places ----------------------------------------------------

/**
 * The words of `text` outside comments: {word, from, to, depth, head (first in its list), list (the
 * list's first word), after (the word before it in its list), section (the section's keyword),
 * scope (where a ?variable's scope opens: its declaration's list in :predicates and :functions,
 * else its section)}.
 */
export function words(text) {
  const found = [];
  const stack = [];
  let section = "";
  const re = /;[^\n]*|\(|\)|[^\s();]+/g;
  let match;
  while ((match = re.exec(text)) !== null) {
    const token = match[0];
    if (token[0] === ";") continue;
    if (token === "(") {
      stack.push({ first: null, count: 0, last: null, from: match.index });
      continue;
    }
    if (token === ")") {
      stack.pop();
      if (stack.length === 1) section = "";
      continue;
    }
    const frame = stack[stack.length - 1];
    const word = { word: token, from: match.index, to: match.index + token.length, depth: stack.length, head: false, list: null, after: null };
    if (frame) {
      word.head = frame.count === 0;
      word.list = frame.first;
      word.after = frame.last;
      if (frame.count === 0) frame.first = token.toLowerCase();
      frame.count += 1;
      frame.last = token;
      if (stack.length === 2 && word.head) section = token.toLowerCase();
    }
    word.section = section;
    const declaring = section === ":predicates" || section === ":functions";
    word.scope = (declaring ? stack[2] : stack[1])?.from ?? null;
    found.push(word);
  }
  return found;
}

// -- the names declared and used in a domain and its problem -------------------------------------

const KINDS = { predicate: "predicate", function: "function", action: "action", type: "type", object: "object", variable: "parameter" };

/**
 * What a word stands for, as a key "kind:name" (a ?variable's key holds its file and scope), or
 * null for keywords, numbers and the file's own names: its place decides, never the word alone, so
 * an object and a type (or a predicate and an action) of the same name stay apart.
 */
function meaning(token, file, functions) {
  const lower = token.word.toLowerCase();
  if (lower.startsWith(":") || lower === "-" || /^[-+]?\d/.test(lower)) return null;
  if (lower.startsWith("?")) return token.scope === null ? null : `variable:${file}@${token.scope}:${lower}`;
  if (token.after === "-") return `type:${lower}`;
  if (token.depth === 2 && token.list === ":types") return `type:${lower}`;
  if (token.depth === 2 && (token.list === ":objects" || token.list === ":constants")) return `object:${lower}`;
  if (token.depth === 2 && token.list === ":action") return token.after?.toLowerCase() === ":action" ? `action:${lower}` : null;
  if (token.depth <= 2 || token.section === ":requirements") return null;
  if (token.head) return KEYWORDS.has(lower) || lower === "=" ? null : `${functions.has(lower) ? "function" : "predicate"}:${lower}`;
  return `object:${lower}`;
}

/** Whether `token` declares what it stands for (a ?variable: its first place in its scope). */
function declares(token) {
  if (token.word === "-") return false;
  if (token.depth === 2) return [":types", ":objects", ":constants"].includes(token.list) && (token.list === ":types" || token.after !== "-")
    || (token.list === ":action" && token.after?.toLowerCase() === ":action");
  return token.depth === 3 && token.head && (token.section === ":predicates" || token.section === ":functions");
}

/** The names of a task: "kind:name" -> {name, kind, declared: {file, from, to, line, text}, uses: [{file, from, to, line}]}. */
export function symbols(files) {
  const table = new Map();
  const tokens = Object.entries(files).map(([file, text]) => [file, text, words(text)]);
  const functions = new Set(tokens.flatMap(([, , all]) => all.filter((t) => t.depth === 3 && t.head && t.section === ":functions").map((t) => t.word.toLowerCase())));
  for (const [file, text, all] of tokens) {
    for (const token of all) {
      const key = meaning(token, file, functions);
      if (key && !table.has(key) && (declares(token) || key.startsWith("variable:"))) {
        table.set(key, { name: token.word, kind: KINDS[key.split(":")[0]], key, declared: place(file, text, token, true), uses: [] });
      }
    }
  }
  for (const [file, text, all] of tokens) {
    for (const token of all) {
      const symbol = table.get(meaning(token, file, functions));
      if (symbol && !(symbol.declared.file === file && symbol.declared.from === token.from)) symbol.uses.push(place(file, text, token, false));
    }
  }
  table.functions = functions;
  return table;
}

function place(file, text, token, withText) {
  const line = text.slice(0, token.from).split("\n").length;
  const found = { file, from: token.from, to: token.to, line };
  if (withText) {
    const start = text.lastIndexOf("\n", token.from - 1) + 1;
    const end = text.indexOf("\n", token.from);
    found.text = text.slice(start, end < 0 ? text.length : end).trim();
  }
  return found;
}

/** The symbol under position `at` of `file`, with the word's range. */
export function symbolUnder(table, file, text, at) {
  for (const token of words(text)) {
    if (token.from <= at && at <= token.to) {
      const symbol = table.get(meaning(token, file, table.functions));
      return symbol ? { symbol, from: token.from, to: token.to } : null;
    }
  }
  return null;
}

/** Every place of `symbol` in `file`'s text (its declaration and its uses), as [from, to] ranges. */
export function placesIn(symbol, file) {
  return [symbol.declared, ...symbol.uses].filter((p) => p.file === file).map((p) => [p.from, p.to]);
}

// -- indentation and folding --------------------------------------------------------------------

/** Indent a line by the parentheses open before it (two spaces a level), a closing one outdented. */
export const pddlIndent = indentService.of((context, pos) => {
  const before = context.state.doc.sliceString(0, pos);
  let depth = 0;
  for (const token of before.matchAll(/;[^\n]*|\(|\)/g)) {
    if (token[0] === "(") depth += 1;
    else if (token[0] === ")") depth = Math.max(0, depth - 1);
  }
  const line = context.lineAt(pos);
  const after = line.text.slice(pos - line.from);
  return Math.max(0, depth - (/^\s*\)/.test(after) ? 1 : 0)) * context.unit;
});

/** Fold a list that opens on a line and closes on a later one. */
export const pddlFolding = foldService.of((state, lineStart, lineEnd) => {
  const text = state.doc.sliceString(lineStart, lineEnd);
  const open = text.split(";")[0].indexOf("(");
  if (open < 0) return null;
  let depth = 0;
  const doc = state.doc.toString();
  for (let i = lineStart + open; i < doc.length; i += 1) {
    const c = doc[i];
    if (c === ";") {
      const next = doc.indexOf("\n", i);
      i = next < 0 ? doc.length : next;
    } else if (c === "(") depth += 1;
    else if (c === ")") {
      depth -= 1;
      if (depth === 0) return i > lineEnd ? { from: lineEnd, to: i } : null;
    }
  }
  return null;
});
