// Safeforge workbench: the list's filters, the task page's live check, save, plan box and new tasks.
// Plain JavaScript; the editors are CodeMirror's (editor.js, built by scripts/build_editor.sh). Text
// from a task is only ever set with textContent or arrives in HTML the server escaped; nothing here
// builds markup from it.
"use strict";

const CHECK_DELAY_MS = 600;
const PROGRESS_MS = 500;

async function getJSON(url) {
  try {
    return await (await fetch(url)).json();
  } catch (error) {
    return {};
  }
}

async function postJSON(url, body) {
  const response = await fetch(url, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(body),
  });
  let answer;
  try {
    answer = await response.json();
  } catch (error) {
    answer = { error: `the workbench answered HTTP ${response.status}` };
  }
  if (!response.ok && !answer.error) answer.error = `the workbench answered HTTP ${response.status}`;
  return answer;
}

function say(element, text, kind) {
  if (!element) return;
  element.textContent = text;
  element.className = `message ${kind || ""}`;
}

// -- the list ----------------------------------------------------------------------------------
function setUpList() {
  const filters = document.getElementById("filters");
  filters.querySelectorAll("select").forEach((select) => select.addEventListener("change", () => filters.submit()));
  const button = document.getElementById("new-button");
  if (button) {
    button.addEventListener("click", async () => {
      const from = document.getElementById("new-from").value;
      await createTask(document.getElementById("new-name").value.trim(), from || null, document.getElementById("new-message"));
    });
  }
}

async function createTask(name, copyOf, message) {
  say(message, "creating…");
  const answer = await postJSON("/api/new", { name: name, copy_of: copyOf });
  if (answer.error) {
    say(message, answer.error, "bad");
  } else {
    window.location.href = answer.url;
  }
}

// -- the task page: editors (CodeMirror, from editor.js) -----------------------------------------
class Editor {
  constructor(root, page) {
    this.file = root.dataset.file;
    this.list = root.querySelector(".file-diagnostics");
    const source = root.querySelector("textarea"); // the file as served; the editor takes its place
    this.saved = source.value;
    this.view = SafeforgeEditor.create(root.querySelector(".editor-body"), {
      doc: source.value, readOnly: source.readOnly, file: this.file, onChange: page.changed, onSave: page.save, task: page.task,
    });
    source.remove();
  }

  get text() { return SafeforgeEditor.text(this.view); }

  set text(value) { SafeforgeEditor.setText(this.view, value); }

  mark(diagnostics) {
    const mine = diagnostics.filter((d) => d.file === this.file);
    SafeforgeEditor.mark(this.view, mine);
    this.list.replaceChildren();
    for (const d of mine) {
      const item = document.createElement("li");
      item.className = `severity-${d.severity}`;
      const where = document.createElement(d.line ? "a" : "span");
      where.textContent = d.line ? `line ${d.line}${d.column ? `:${d.column}` : ""}` : this.file;
      if (d.line) {
        where.href = "#";
        where.className = "goto";
        where.dataset.file = this.file;
        where.dataset.line = String(d.line);
        if (d.column) where.dataset.column = String(d.column);
      }
      item.append(where, `: ${d.message}`);
      this.list.append(item);
    }
  }

  goTo(line, column) { SafeforgeEditor.goTo(this.view, line, column); }
}

// -- the task page -----------------------------------------------------------------------------
function setUpTask(main) {
  const api = main.dataset.api;
  const page = {
    changed: () => changed(),
    save: () => askToSave(),
    task: () => ({
      files: Object.fromEntries(editors.map((editor) => [editor.file, editor.text])),
      views: Object.fromEntries(editors.map((editor) => [editor.file, editor.view])),
    }),
  };
  const editors = [...document.querySelectorAll(".editor")].map((root) => new Editor(root, page));
  const byFile = new Map(editors.map((editor) => [editor.file, editor]));
  const status = document.getElementById("check-status");
  const saveButton = document.getElementById("save");
  const revertButton = document.getElementById("revert");
  const saveMessage = document.getElementById("save-message");
  const stopButton = document.getElementById("stop");
  const base = { "safety_domain.pddl": main.dataset.baseDomain, "safety_problem.pddl": main.dataset.baseProblem };
  let timer = null;
  let asked = 0;
  let shown = 0;

  const texts = () => ({ safety_domain: byFile.get("safety_domain.pddl").text, safety_problem: byFile.get("safety_problem.pddl").text });
  const edited = () => editors.some((editor) => editor.text !== editor.saved);

  function setStatus(text, kind) {
    status.textContent = text;
    status.className = `check-status ${kind || ""}`;
  }

  function show(answer) {
    for (const [name, html] of Object.entries(answer.html)) {
      const section = document.querySelector(`[data-section="${name}"]`);
      if (section) section.innerHTML = html; // rendered and escaped by the server
    }
    editors.forEach((editor) => editor.mark(answer.diagnostics));
    const errors = answer.diagnostics.length - answer.warnings;
    const plural = (n, word) => `${n} ${word}${n === 1 ? "" : "s"}`;
    if (answer.ok && !answer.warnings) setStatus("the check passes", "good");
    else if (answer.ok) setStatus(`the check passes with ${plural(answer.warnings, "warning")}`, "warn");
    else if (answer.ok === null) setStatus(errors ? `${plural(errors, "problem")}` : "the structure holds; not checked with the planners", "");
    else setStatus(`the check fails: ${plural(errors, "problem")}`, "bad");
    shown += 1;
    document.body.dataset.checksShown = String(shown); // how many answers the page has shown
  }

  function showError(message) {
    setStatus("the check did not run: see below", "bad");
    const section = document.querySelector('[data-section="diagnostics"]');
    const error = document.createElement("p");
    error.className = "bad";
    error.textContent = message; // the server's message, as it wrote it
    section.replaceChildren(error);
    document.querySelector('[data-section="checks"]').replaceChildren();
    shown += 1;
    document.body.dataset.checksShown = String(shown);
  }

  async function check() {
    asked += 1;
    const mine = asked;
    setStatus("checking…", "busy");
    if (stopButton) stopButton.hidden = false;
    const watching = setInterval(async () => {
      const progress = (await getJSON(`${api}/progress`)).check;
      if (mine === asked && progress) setStatus(`checking: ${progress.stage} (${progress.seconds.toFixed(1)} s of ${progress.time_limit} s)`, "busy");
    }, PROGRESS_MS);
    const answer = await postJSON(`${api}/check`, texts());
    clearInterval(watching);
    if (mine !== asked || answer.superseded) return; // a newer check is on its way
    if (stopButton) stopButton.hidden = true;
    if (answer.stopped) setStatus("check stopped: edit the text or press Check again", "");
    else if (answer.error) showError(answer.error);
    else show(answer);
  }

  function changed() {
    const dirty = edited();
    if (saveButton) saveButton.disabled = !dirty;
    if (revertButton) revertButton.disabled = !dirty;
    say(saveMessage, dirty ? "edited, not saved" : "", "");
    clearTimeout(timer);
    timer = setTimeout(check, CHECK_DELAY_MS);
  }

  document.getElementById("recheck")?.addEventListener("click", check);
  stopButton?.addEventListener("click", () => postJSON(`${api}/stop`, {}));
  revertButton?.addEventListener("click", () => {
    editors.forEach((editor) => { if (editor.text !== editor.saved) editor.text = editor.saved; });
  });
  // Save: first the diff of the unsaved change, then the write
  const dialog = document.getElementById("diff-dialog");
  function askToSave() {
    if (!saveButton || !edited()) return;
    const diffs = document.getElementById("diffs");
    diffs.replaceChildren();
    for (const editor of editors.filter((e) => e.text !== e.saved)) {
      const title = document.createElement("div");
      title.className = "editor-title";
      title.textContent = editor.file;
      const host = document.createElement("div");
      host.className = "diff-body";
      diffs.append(title, host);
      SafeforgeEditor.diff(host, editor.saved, editor.text);
    }
    dialog.showModal();
  }
  document.getElementById("diff-cancel")?.addEventListener("click", () => dialog.close());
  document.getElementById("diff-save")?.addEventListener("click", () => { dialog.close(); save(); });
  saveButton?.addEventListener("click", askToSave);

  async function save() {
    saveButton.disabled = true;
    say(saveMessage, "checking and saving…", "busy");
    asked += 1; // a live check still running is now out of date
    const answer = await postJSON(`${api}/save`, { ...texts(), base_sha256: base });
    if (answer.error) {
      say(saveMessage, answer.error, "bad");
      saveButton.disabled = !edited();
      return;
    }
    Object.assign(base, answer.base_sha256);
    editors.forEach((editor) => { editor.saved = editor.text; });
    show(answer);
    if (revertButton) revertButton.disabled = true;
    say(saveMessage, answer.message, answer.ok ? (answer.warnings ? "" : "good") : "bad");
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest("a.goto");
    if (!link) return;
    event.preventDefault();
    byFile.get(link.dataset.file)?.goTo(Number(link.dataset.line), Number(link.dataset.column || 0));
  });

  const planInput = document.getElementById("plan-input");
  const planResult = document.getElementById("plan-result");
  document.getElementById("plan-score").addEventListener("click", async () => {
    planResult.textContent = "scoring…";
    const answer = await postJSON(`${api}/plan`, { ...texts(), plan: planInput.value });
    if (answer.error) {
      planResult.replaceChildren();
      const error = document.createElement("p");
      error.className = "bad";
      error.textContent = answer.error;
      planResult.append(error);
    } else {
      planResult.innerHTML = answer.html; // rendered and escaped by the server
    }
  });

  document.getElementById("copy-button")?.addEventListener("click", () =>
    createTask(document.getElementById("copy-name").value.trim(), main.dataset.key, document.getElementById("copy-message")));

  check();
}

document.addEventListener("DOMContentLoaded", () => {
  const main = document.querySelector("main");
  if (main.dataset.page === "list") setUpList();
  if (main.dataset.page === "task") setUpTask(main);
});
