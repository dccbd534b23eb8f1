// Safeforge workbench: the list's filters, the task page's live check, save, plan box and new tasks.
// Plain JavaScript, no build step. Text from a task is only ever set with textContent or arrives in
// HTML the server escaped; nothing here builds markup from it.
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

// -- the task page: editors ---------------------------------------------------------------------
class Editor {
  constructor(root) {
    this.file = root.dataset.file;
    this.textarea = root.querySelector("textarea");
    this.gutter = root.querySelector(".gutter");
    this.list = root.querySelector(".file-diagnostics");
    this.saved = this.textarea.value;
    this.marks = new Map();
    this.textarea.addEventListener("scroll", () => { this.gutter.scrollTop = this.textarea.scrollTop; });
    this.drawGutter();
  }

  get text() { return this.textarea.value; }

  drawGutter() {
    const lines = this.text.split("\n").length;
    this.gutter.replaceChildren();
    for (let line = 1; line <= lines; line += 1) {
      const number = document.createElement("span");
      number.textContent = String(line);
      const messages = this.marks.get(line);
      if (messages) {
        number.className = "marked";
        number.title = messages.join("\n");
      }
      this.gutter.append(number, "\n");
    }
    this.gutter.scrollTop = this.textarea.scrollTop;
  }

  mark(diagnostics) {
    this.marks = new Map();
    this.list.replaceChildren();
    for (const d of diagnostics.filter((d) => d.file === this.file)) {
      const item = document.createElement("li");
      const where = document.createElement(d.line ? "a" : "span");
      where.textContent = d.line ? `line ${d.line}` : this.file;
      if (d.line) {
        where.href = "#";
        where.className = "goto";
        where.dataset.file = this.file;
        where.dataset.line = String(d.line);
        this.marks.set(d.line, [...(this.marks.get(d.line) || []), d.message]);
      }
      item.append(where, `: ${d.message}`);
      this.list.append(item);
    }
    this.drawGutter();
  }

  goTo(line) {
    const lines = this.text.split("\n");
    const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    const end = start + (lines[line - 1] || "").length;
    this.textarea.focus();
    this.textarea.setSelectionRange(start, end);
    const height = parseFloat(getComputedStyle(this.textarea).lineHeight) || 16;
    this.textarea.scrollTop = Math.max(0, (line - 4) * height);
    this.textarea.scrollIntoView({ block: "nearest" });
  }
}

// -- the task page -----------------------------------------------------------------------------
function setUpTask(main) {
  const api = main.dataset.api;
  const editors = [...document.querySelectorAll(".editor")].map((root) => new Editor(root));
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
    editors.forEach((editor) => editor.drawGutter());
    const dirty = edited();
    if (saveButton) saveButton.disabled = !dirty;
    if (revertButton) revertButton.disabled = !dirty;
    say(saveMessage, dirty ? "edited, not saved" : "", "");
    clearTimeout(timer);
    timer = setTimeout(check, CHECK_DELAY_MS);
  }

  editors.forEach((editor) => editor.textarea.addEventListener("input", changed));
  document.getElementById("recheck")?.addEventListener("click", check);
  stopButton?.addEventListener("click", () => postJSON(`${api}/stop`, {}));
  revertButton?.addEventListener("click", () => {
    editors.forEach((editor) => { editor.textarea.value = editor.saved; });
    changed();
  });
  saveButton?.addEventListener("click", async () => {
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
    say(saveMessage, answer.message, answer.ok ? "good" : "bad");
  });

  document.addEventListener("click", (event) => {
    const link = event.target.closest("a.goto");
    if (!link) return;
    event.preventDefault();
    byFile.get(link.dataset.file)?.goTo(Number(link.dataset.line));
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
