// The workbench's editor (window.SafeforgeEditor): CodeMirror 6 with the PDDL mode of pddl.js,
// line numbers, bracket matching and closing, auto-indent (Tab indents), folding, search (Ctrl+F),
// undo, the check's diagnostics underlined, and the task's names: hover, go to definition (F12 or
// Ctrl+click), completion (Ctrl+Space, or as you type) and rename (F2) across both files, by
// meaning: an object and a type of one name are two names; a parameter belongs to its action.
import { autocompletion, closeBrackets, closeBracketsKeymap, completionKeymap } from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { bracketMatching, foldGutter, foldKeymap, indentOnInput, syntaxHighlighting, HighlightStyle } from "@codemirror/language";
import { lintGutter, setDiagnostics } from "@codemirror/lint";
import { unifiedMergeView } from "@codemirror/merge";
import { highlightSelectionMatches, search, searchKeymap } from "@codemirror/search";
import { Compartment, EditorSelection, EditorState } from "@codemirror/state";
import {
  EditorView, crosshairCursor, drawSelection, highlightActiveLine, highlightActiveLineGutter, highlightSpecialChars,
  hoverTooltip, keymap, lineNumbers, rectangularSelection,
} from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { placesIn, pddlFolding, pddlIndent, pddlLanguage, symbolUnder, symbols } from "./pddl.js";

export { symbols };

const colours = HighlightStyle.define([
  { tag: tags.comment, color: "#6a737d", fontStyle: "italic" },
  { tag: tags.keyword, color: "#8a3ab9" },
  { tag: tags.variableName, color: "#b35c00" },
  { tag: tags.number, color: "#1c7c54" },
  { tag: tags.operator, color: "#6a737d" },
  { tag: tags.name, color: "#1d2b3f" },
]);

const theme = EditorView.theme({
  "&": { height: "100%", fontSize: "12.5px" },
  ".cm-scroller": { fontFamily: "var(--mono)", lineHeight: "18px" },
  ".cm-tooltip-hover": { maxWidth: "520px", padding: "4px 8px" },
  ".cm-tooltip-hover code": { whiteSpace: "pre-wrap" },
});

/**
 * An editor in `parent`: {doc, readOnly, file, onChange(view), onSave(), task()} where task() gives
 * {files: {file: text}, views: {file: view}} for the names of both files.
 */
export function create(parent, options) {
  const readOnly = new Compartment();
  const features = [
    lineNumbers(), highlightActiveLineGutter(), highlightSpecialChars(), history(), foldGutter(), drawSelection(),
    EditorState.allowMultipleSelections.of(true), indentOnInput(), syntaxHighlighting(colours), bracketMatching(),
    closeBrackets(), rectangularSelection(), crosshairCursor(), highlightActiveLine(), highlightSelectionMatches(),
    search({ top: true }), lintGutter(), pddlLanguage, pddlIndent, pddlFolding, theme, EditorView.cspNonce.of(nonce()),
    autocompletion({ override: [(context) => complete(context, options)] }),
    hoverTooltip((view, pos) => hover(view, pos, options)),
    readOnly.of(EditorState.readOnly.of(Boolean(options.readOnly))),
    keymap.of([
      { key: "Mod-s", preventDefault: true, run: () => { options.onSave?.(); return true; } },
      { key: "F12", run: (view) => goToDefinition(view, view.state.selection.main.head, options) },
      { key: "F2", run: (view) => rename(view, options) },
      ...closeBracketsKeymap, ...defaultKeymap, ...searchKeymap, ...historyKeymap, ...foldKeymap, ...completionKeymap, indentWithTab,
    ]),
    EditorView.domEventHandlers({
      mousedown: (event, view) => {
        if (!(event.ctrlKey || event.metaKey)) return false;
        const pos = view.posAtCoords({ x: event.clientX, y: event.clientY });
        return pos !== null && goToDefinition(view, pos, options);
      },
    }),
    EditorView.updateListener.of((update) => { if (update.docChanged) options.onChange?.(update.view); }),
  ];
  const view = new EditorView({ doc: options.doc, extensions: features, parent });
  view.safeforgeFile = options.file;
  return view;
}

/** The nonce the page's Content-Security-Policy allows the editor's <style> with. */
function nonce() {
  return document.querySelector('meta[name="csp-nonce"]')?.content || "";
}

/** Underline the check's diagnostics of this file: [{line, column, end_column, severity, message}]. */
export function mark(view, diagnostics) {
  const doc = view.state.doc;
  const found = diagnostics.filter((d) => d.line && d.line <= doc.lines).map((d) => {
    const line = doc.line(d.line);
    const from = Math.min(line.to, line.from + Math.max(0, (d.column || 1) - 1));
    const to = d.end_column ? Math.min(line.to, line.from + d.end_column - 1) : line.to;
    return { from, to: Math.max(to, from), severity: d.severity === "warning" ? "warning" : "error", message: `${d.check}: ${d.message}`, source: d.check };
  });
  view.dispatch(setDiagnostics(view.state, found));
}

/** Put the cursor at `line` (and `column`), select the line's text, and show it. */
export function goTo(view, line, column) {
  const target = view.state.doc.line(Math.max(1, Math.min(line, view.state.doc.lines)));
  const from = column ? Math.min(target.to, target.from + column - 1) : target.from + (target.text.length - target.text.trimStart().length);
  view.dispatch({ selection: EditorSelection.range(from, target.to), scrollIntoView: true, effects: EditorView.scrollIntoView(from, { y: "center" }) });
  view.focus();
}

export function text(view) {
  return view.state.doc.toString();
}

export function setText(view, value) {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: value } });
}

/** A read-only view of `edited` with the changes from `original` marked (deleted lines shown). */
export function diff(parent, original, edited) {
  return new EditorView({
    doc: edited,
    parent,
    extensions: [
      lineNumbers(), syntaxHighlighting(colours), pddlLanguage, theme, EditorView.cspNonce.of(nonce()),
      EditorState.readOnly.of(true), EditorView.editable.of(false),
      unifiedMergeView({ original, mergeControls: false, highlightChanges: true, gutter: true, collapseUnchanged: { margin: 3, minSize: 4 } }),
    ],
  });
}

// -- the task's names ---------------------------------------------------------------------------
function table(options) {
  return symbols(options.task().files);
}

function describe(symbol) {
  const where = (p) => `${p.file}:${p.line}`;
  const uses = symbol.uses.length ? symbol.uses.map(where).join(", ") : "nowhere";
  return { head: `${symbol.kind} ${symbol.name}`, declared: symbol.declared.text, at: where(symbol.declared), uses: `used ${symbol.uses.length}×: ${uses}` };
}

function hover(view, pos, options) {
  const found = symbolUnder(table(options), options.file, text(view), pos);
  if (!found) return null;
  return {
    pos: found.from,
    end: found.to,
    above: true,
    create() {
      const told = describe(found.symbol);
      const dom = document.createElement("div");
      dom.className = "cm-symbol";
      const head = document.createElement("b");
      head.textContent = told.head;
      const declared = document.createElement("code");
      declared.textContent = told.declared;
      const at = document.createElement("div");
      at.textContent = `declared at ${told.at}`;
      const uses = document.createElement("div");
      uses.textContent = told.uses;
      dom.append(head, " ", declared, at, uses);
      return { dom };
    },
  };
}

function goToDefinition(view, pos, options) {
  const found = symbolUnder(table(options), options.file, text(view), pos);
  if (!found) return false;
  const declared = found.symbol.declared;
  const target = options.task().views[declared.file];
  if (!target) return false;
  target.dispatch({ selection: EditorSelection.range(declared.from, declared.to), effects: EditorView.scrollIntoView(declared.from, { y: "center" }) });
  target.focus();
  return true;
}

function rename(view, options) {
  const found = symbolUnder(table(options), options.file, text(view), view.state.selection.main.head);
  if (!found || view.state.readOnly) return false;
  const symbol = found.symbol;
  const answer = window.prompt(`Rename ${symbol.kind} ${symbol.name} in both files to:`, symbol.name);
  const name = answer && symbol.kind === "parameter" && !answer.startsWith("?") ? `?${answer}` : answer;
  if (!name || name === symbol.name || !/^\??[A-Za-z][\w-]*$/.test(name)) return true;
  for (const [file, target] of Object.entries(options.task().views)) {
    const changes = placesIn(symbol, file).map(([from, to]) => ({ from, to, insert: name }));
    if (changes.length) target.dispatch({ changes });
  }
  return true;
}

const SECTIONS = [
  ":requirements", ":types", ":constants", ":predicates", ":functions", ":action", ":parameters", ":precondition", ":effect",
  ":domain", ":objects", ":init", ":goal", "and", "not", "when", "or", "forall", "exists", "increase",
];

function complete(context, options) {
  const word = context.matchBefore(/[\w:?-]+/);
  if (!word && !context.explicit) return null;
  const from = word ? word.from : context.pos;
  const found = [...table(options).values()].filter((symbol) => symbol.kind !== "parameter").map((symbol) => ({
    label: symbol.name, type: { predicate: "function", function: "function", action: "method", type: "type", object: "variable" }[symbol.kind],
    detail: symbol.kind, info: symbol.declared.text,
  }));
  const keywords = SECTIONS.map((label) => ({ label, type: "keyword" }));
  return { from, options: [...found, ...keywords], validFor: /^[\w:?-]*$/ };
}

/** The editor whose element is (or holds) `dom`: for the page's tests and tools. */
export function viewOf(dom) {
  return EditorView.findFromDOM(dom.querySelector(".cm-editor") || dom);
}
