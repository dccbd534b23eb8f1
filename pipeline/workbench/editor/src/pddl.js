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

/** The words of `text` outside comments: {word, from, to, head (first in its list), list (the list's first word), section, after (the word before)}. */
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
      stack.push({ first: null, count: 0, prev: null });
      continue;
    }
    if (token === ")") {
      const closed = stack.pop();
      if (stack.length === 1) section = "";
      if (closed && stack.length === 2 && closed.first) stack[stack.length - 1].prev = closed.first;
      continue;
    }
    const frame = stack[stack.length - 1];
    const word = { word: token, from: match.index, to: match.index + token.length, depth: stack.length };
    if (frame) {
      word.head = frame.count === 0;
      word.list = frame.first;
      word.after = frame.last || null;
      if (frame.count === 0) frame.first = token.toLowerCase();
      frame.count += 1;
      frame.last = token;
      if (stack.length === 2 && word.head) section = token.toLowerCase();
    }
    word.section = section;
    word.outer = stack.length >= 2 ? stack[1].first : null;
    found.push(word);
  }
  return found;
}

// -- the names declared and used in a domain and its problem -------------------------------------

/** The names of a task: name (lower case) -> {name, kind, declared: {file, from, to, line, text}, uses: [{file, from, to, line}]}. */
export function symbols(files) {
  const table = new Map();
  const declare = (kind, token, file, text) => {
    const key = `${kind}:${token.word.toLowerCase()}`;
    if (!table.has(key)) table.set(key, { name: token.word, kind, declared: place(file, text, token, true), uses: [] });
  };
  for (const [file, text] of Object.entries(files)) {
    const all = words(text);
    let typed = false;
    all.forEach((token, index) => {
      const lower = token.word.toLowerCase();
      if (token.depth === 3 && token.head && (token.section === ":predicates" || token.section === ":functions")) {
        declare(token.section === ":predicates" ? "predicate" : "function", token, file, text);
      } else if (token.depth === 2 && !token.head && token.list === ":action" && all[index - 1]?.word.toLowerCase() === ":action") {
        declare("action", token, file, text);
      } else if (token.depth === 2 && !token.head && [":types", ":objects", ":constants"].includes(token.list)) {
        if (lower === "-") {
          typed = true;
          return;
        }
        if (token.list === ":types" || typed) declare("type", token, file, text);
        else declare("object", token, file, text);
        typed = false;
      }
    });
  }
  const byName = new Map([...table.values()].map((symbol) => [`${symbol.kind}:${symbol.name.toLowerCase()}`, symbol]));
  for (const [file, text] of Object.entries(files)) {
    for (const token of words(text)) {
      const symbol = symbolAt(byName, token);
      if (symbol && !(symbol.declared.file === file && symbol.declared.from === token.from)) symbol.uses.push(place(file, text, token, false));
    }
  }
  return byName;
}

/** The symbol a word stands for: a list's first word is a predicate, function or keyword; another word an object or type. */
function symbolAt(table, token) {
  const lower = token.word.toLowerCase();
  if (lower.startsWith("?") || lower.startsWith(":")) return null;
  if (token.head) return table.get(`predicate:${lower}`) || table.get(`function:${lower}`) || null;
  if (token.list === ":action" && token.depth === 2) return table.get(`action:${lower}`) || null;
  return table.get(`object:${lower}`) || table.get(`type:${lower}`) || null;
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
      const symbol = symbolAt(table, token);
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
