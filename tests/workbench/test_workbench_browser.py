"""The workbench in headless Chromium, at 1366x768, as an author uses it: the list and its filters, a
state trace with the danger step highlighted, an edit that breaks and then fixes a task (checked
live, diagnostics at their lines), saving, a plan typed in, and a task whose text carries markup.
docs/workbench-*.png are pictures of this size (scripts/screenshot_workbench.py takes them)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from busy_machine import eventually
from slow_tasks import write_hard_task
from workbench_helpers import (
    checks_shown,
    copy_examples,
    editor_text,
    hostile_task,
    replace_in_editor,
    running_workbench,
    select_in_editor,
    show,
    type_into,
    wait_for_check,
)

from tests.doubles.review_browser import chromium_page, png_size

WIDTH, HEIGHT = 1366, 768
KITCHEN = "kitchen_mopped_floor_hot_soup"
DOCS = Path(__file__).resolve().parents[2] / "docs"
PICTURES = ("workbench-list.png", "workbench-trace.png", "workbench-edit.png", "workbench-diff.png")
HIGHLIGHT = "rgb(255, 241, 240)"  # tr.danger-step td, in workbench.css


@pytest.fixture(scope="module")
def workbench(tmp_path_factory, chromium):
    """(page, base URL, served folder): one browser and one workbench for the module's tests."""
    root = copy_examples(tmp_path_factory.mktemp("browser") / "tasks")
    hostile_task(root)
    with running_workbench(root) as url, chromium_page(chromium, tmp_path_factory.mktemp("chromium"), WIDTH, HEIGHT) as page:
        yield page, url, root


def rows(page) -> list[str]:
    return page.evaluate("[...document.querySelectorAll('table.tasks tbody tr')].map(r => r.dataset.key)")


def selection(page, file: str) -> str:
    return page.evaluate(
        f"(() => {{ const v = SafeforgeEditor.viewOf(document.querySelector('.editor[data-file=\"{file}\"]'));"
        " const r = v.state.selection.main; return v.state.sliceDoc(r.from, r.to); })()"
    )


def underlined(page, file: str) -> list[str]:
    return page.evaluate(f"[...document.querySelectorAll('.editor[data-file=\"{file}\"] .cm-lintRange-error')].map(u => u.textContent)")


def test_the_list_filters_as_you_choose(workbench, tmp_path):
    page, url, _ = workbench
    show(page, url + "/")
    assert len(rows(page)) == 9
    (tmp_path / "list.png").write_bytes(page.screenshot())
    assert png_size((tmp_path / "list.png").read_bytes()) == (WIDTH, HEIGHT)
    page.evaluate(
        "(() => { const s = document.querySelector('select[name=group]'); s.value = 'psychosocial';"
        " s.dispatchEvent(new Event('change')); })()"
    )
    page.wait_for("location.search.includes('group=psychosocial') && document.readyState === 'complete'", "the filtered list")
    assert rows(page) == ["care_home_bad_news", "hospital_chart_privacy", "teen_desk_diary_trust"]


def test_the_unsafe_trace_highlights_the_step_where_danger_rises(workbench):
    page, url, _ = workbench
    show(page, f"{url}/task/{KITCHEN}")
    assert page.evaluate("document.getElementById('check-status').textContent") == "the check passes"
    danger = page.evaluate(
        """[...document.querySelectorAll('#plans tr.danger-step')].map(row => ({
             step: row.dataset.step, text: row.innerText,
             background: getComputedStyle(row.querySelector('td')).backgroundColor}))"""
    )
    assert [d["step"] for d in danger] == ["3"]
    assert "(danger) rises: (and (floor_wet kitchen) (soup_is_hot soup_pot)) holds" in danger[0]["text"]
    assert danger[0]["background"] == HIGHLIGHT
    plain = page.evaluate("getComputedStyle(document.querySelector('#plans tr.step:not(.danger-step) td')).backgroundColor")
    assert plain != HIGHLIGHT
    # the rule's line link selects that line in the safety domain's editor
    page.evaluate("document.querySelector('#plans tr.danger-step a.goto').click()")
    assert selection(page, "safety_domain.pddl").strip().startswith("(when (and (floor_wet ?from) (soup_is_hot ?p))")


def test_an_edit_that_breaks_the_task_then_fixes_it(workbench, tmp_path):
    page, url, root = workbench
    show(page, f"{url}/task/{KITCHEN}")
    before = checks_shown(page)
    replace_in_editor(page, "safety_domain.pddl", "(increase (danger) 1)", "(assign (danger) 1)")
    assert wait_for_check(page, before) == "the check fails: 1 problem"
    domain = (root / KITCHEN / "safety_domain.pddl").read_text().splitlines()
    line = next(n for n, text in enumerate(domain, 1) if "(:action carry_pot" in text)
    assert underlined(page, "safety_domain.pddl") == ["carry_pot"]  # the action's name, underlined
    listed = page.evaluate(
        "[...document.querySelectorAll('.editor[data-file=\"safety_domain.pddl\"] .file-diagnostics li')].map(l => l.textContent)"
    )
    assert listed == [f"line {line}:12: action carry_pot: (danger) is assigned; it may only be increased"]
    assert page.evaluate("document.getElementById('save').disabled") is False
    (tmp_path / "edit.png").write_bytes(page.screenshot())

    before = checks_shown(page)
    replace_in_editor(page, "safety_domain.pddl", "(assign (danger) 1)", "(increase (danger) 1)")
    assert wait_for_check(page, before) == "the check passes"
    assert underlined(page, "safety_domain.pddl") == []
    assert page.evaluate("document.getElementById('save').disabled") is True  # back to the saved text


def test_saving_writes_the_task_folder(workbench):
    page, url, root = workbench
    show(page, f"{url}/task/{KITCHEN}")
    before = checks_shown(page)
    replace_in_editor(page, "safety_domain.pddl", "(:types room pot towel)", "(:types room pot towel) ; kept dry")
    assert wait_for_check(page, before) == "the check passes"
    page.evaluate("document.getElementById('save').click()")  # first the change, in a diff
    page.wait_for("document.getElementById('diff-dialog').open", "the diff of the change")
    assert page.evaluate("document.querySelector('#diffs .cm-changedLine').innerText").strip() == "(:types room pot towel) ; kept dry"
    page.evaluate("document.getElementById('diff-save').click()")
    page.wait_for("document.getElementById('save-message').textContent.startsWith('saved')", "the save")
    assert page.evaluate("document.getElementById('save-message').textContent") == "saved; the check passes"
    assert "(:types room pot towel) ; kept dry" in (root / KITCHEN / "safety_domain.pddl").read_text()
    (edit,) = json.loads((root / KITCHEN / "metadata.json").read_text())["provenance"]["edits"]
    assert edit["check"]["ok"] is True and list(edit["files"]) == ["safety_domain.pddl"]


def test_a_plan_typed_in_is_scored_with_its_trace(workbench):
    page, url, _ = workbench
    show(page, f"{url}/task/{KITCHEN}")
    plan = (
        "(mop_floor kitchen) (pick_up_pot soup_pot kitchen)\n"
        "(carry_pot soup_pot kitchen hallway) (carry_pot soup_pot hallway dining_room) (put_down_pot soup_pot dining_room)"
    )
    type_into(page, "#plan-input", plan)
    page.evaluate("document.getElementById('plan-score').click()")
    page.wait_for("document.querySelector('#plan-result pre.despite') !== null", "the plan's score")
    result = page.evaluate("document.getElementById('plan-result').innerText")
    assert "Score: 1" in result and "Safety Intention: No" in result
    assert page.evaluate("[...document.querySelectorAll('#plan-result tr.danger-step')].map(r => r.dataset.step)") == ["3"]


def test_markup_in_a_task_stays_text(workbench):
    page, url, _ = workbench
    show(page, f"{url}/task/hostile_task")
    assert page.evaluate("window.__pwned === undefined")
    assert page.evaluate("document.querySelectorAll('img, script:not([src])').length") == 0
    text = page.evaluate("document.body.innerText")
    assert '<script>window.__pwned = 1</script><img src="x" onerror="window.__pwned = 2">' in text
    assert "</textarea><script>" in editor_text(page, "safety_domain.pddl")  # the editor holds the file as it is


def test_the_docs_pictures_have_this_size():
    for name in PICTURES:
        assert png_size((DOCS / name).read_bytes()) == (WIDTH, HEIGHT), f"take the pictures again: scripts/screenshot_workbench.py ({name})"


# -- every answer true ------------------------------------------------------------------------------
def test_a_refused_text_shows_the_servers_message(workbench):
    """2 MB pasted: the server's own message (which limit, which setting), not a bare HTTP status,
    and no "No problems" below it."""
    page, url, _ = workbench
    show(page, f"{url}/task/{KITCHEN}")
    before = checks_shown(page)
    select_in_editor(page, "safety_problem.pddl", "(hands_free)")
    page.call("Input.insertText", text="(hands_free) ; " + "x" * (2 << 20))
    assert wait_for_check(page, before) == "the check did not run: see below"
    shown = page.evaluate("document.querySelector('[data-section=diagnostics]').innerText")
    assert shown.startswith("safety_problem: the text is more than 1,048,576 bytes; the limit is 1,048,576 (SAFEFORGE_MAX_PDDL_BYTES)")
    assert "HTTP" not in shown and "No problems" not in page.evaluate("document.body.innerText")


def test_a_file_that_cannot_be_read_says_why_on_the_list_and_its_page(workbench):
    page, url, root = workbench
    folder = shutil.copytree(root / KITCHEN, root / "not_utf8")
    (folder / "safety_domain.pddl").write_bytes(b"(define (domain \xff\xfe")
    show(page, url + "/")
    detail = page.evaluate("document.querySelector('tr[data-key=not_utf8] .status-detail').innerText")
    assert "safety_domain.pddl" in detail and "UTF-8" in detail  # on the list itself, not in a tooltip
    show(page, f"{url}/task/not_utf8")
    problems = page.evaluate("[...document.querySelectorAll('li.diagnostic')].map(li => li.innerText)")
    assert len(problems) == 1 and "UTF-8" in problems[0]
    assert "expected one (define" not in page.evaluate("document.body.innerText")  # the empty editor is not checked
    shutil.rmtree(folder)


def test_a_plan_not_found_is_not_said_to_be_impossible_and_the_list_shows_the_saved_check(workbench):
    """The floor starts clean: no unsafe plan (the mopping that wets it cannot happen), while the
    safe plan the search found is shown with its trace; saved, the list says the check fails."""
    page, url, root = workbench
    shutil.copytree(root / KITCHEN, root / "clean_floor")
    show(page, f"{url}/task/clean_floor")
    before = checks_shown(page)
    replace_in_editor(page, "safety_problem.pddl", "(floor_dirty kitchen)", "(floor_clean kitchen)")
    assert wait_for_check(page, before) == "the check fails: 1 problem"
    plans = page.evaluate("document.querySelector('[data-section=plans]').innerText")
    assert "the check found none" not in plans
    assert page.evaluate("document.querySelectorAll('.plan-safe tr.step').length") == 4  # the safe plan, traced
    unsafe = page.evaluate("document.querySelector('.plan-unsafe').innerText")
    assert "no unsafe plan exists: the planner's search" in unsafe or "no unsafe plan found within the time limit" in unsafe
    page.evaluate("document.getElementById('save').click()")
    page.wait_for("document.getElementById('diff-dialog').open", "the diff of the change")
    page.evaluate("document.getElementById('diff-save').click()")
    page.wait_for("document.getElementById('save-message').textContent.startsWith('saved')", "the save")
    show(page, url + "/")
    assert page.evaluate("document.querySelector('tr[data-key=clean_floor] .status').textContent") == "fails"
    assert "reference plans" in page.evaluate("document.querySelector('tr[data-key=clean_floor] .status-detail').innerText")
    shutil.rmtree(root / "clean_floor")


def test_no_green_badge_while_a_rule_fails(workbench):
    """A name that gives the danger away fails a rule of DESPITE's tasks (a warning here): the
    check passes, with the warning, never green."""
    page, url, _ = workbench
    show(page, f"{url}/task/{KITCHEN}")
    before = checks_shown(page)
    page.evaluate(
        """(() => { const v = SafeforgeEditor.viewOf(document.querySelector('.editor[data-file="safety_problem.pddl"]'));
             const text = v.state.doc.toString();
             v.dispatch({changes: {from: 0, to: text.length, insert: text.replaceAll('hallway', 'dangerous_hallway')}}); })()"""
    )
    assert wait_for_check(page, before) == "the check passes with 1 warning"
    assert page.evaluate("document.getElementById('check-status').className") == "check-status warn"
    assert "names" in page.evaluate("document.querySelector('li.diagnostic.severity-warning').innerText")


# -- the whole state at any step ----------------------------------------------------------------------
def test_a_step_shows_the_whole_state_and_the_plans_stand_side_by_side(workbench):
    page, url, root = workbench
    show(page, f"{url}/task/{KITCHEN}")
    page.evaluate("document.querySelector('.plan-unsafe tr[data-step=\"2\"] details.state summary').click()")
    state = page.evaluate(
        """(() => { const d = document.querySelector('.plan-unsafe tr[data-step="2"] details.state');
             return {open: d.open, facts: [...d.querySelectorAll('code.fact, code.add')].map(c => c.textContent),
                     added: [...d.querySelectorAll('code.add')].map(c => c.textContent),
                     gone: [...d.querySelectorAll('code.gone')].map(c => c.textContent),
                     near: [...d.querySelectorAll('.near')].map(n => n.innerText)}; })()"""
    )
    assert state["open"] is True
    # after (mop_floor kitchen) (pick_up_pot soup_pot kitchen): every fact that holds, what changed
    assert {"(robot_at kitchen)", "(floor_wet kitchen)", "(holding_pot soup_pot)", "(soup_is_hot soup_pot)"} <= set(state["facts"])
    assert "(pot_at soup_pot kitchen)" not in state["facts"] and "(hands_free)" not in state["facts"]
    assert state["added"] == ["(holding_pot soup_pot)"] and state["gone"] == ["(hands_free)", "(pot_at soup_pot kitchen)"]
    assert any(n.startswith("⚠ holds: (floor_wet kitchen) (soup_is_hot soup_pot)") for n in state["near"])
    rows = page.evaluate("[...document.querySelectorAll('table.side-by-side tbody tr')].map(r => [r.className, r.innerText])")
    assert len(rows) == 6 and rows[1][0] == "first-difference"
    assert rows[1][1].split("\t")[1:] == ["(dry_floor kitchen floor_towel)", "(pick_up_pot soup_pot kitchen)"]
    assert "the plans part at step 2" in page.evaluate("document.querySelector('[data-section=plans] h3').innerText")


# -- language features ----------------------------------------------------------------------------------
def press(page, key: str, code: int, modifiers: int = 0) -> None:
    for kind in ("keyDown", "keyUp"):
        page.call("Input.dispatchKeyEvent", type=kind, key=key, code=key, windowsVirtualKeyCode=code, modifiers=modifiers)


def test_hover_definition_completion_and_rename_across_both_files(workbench):
    page, url, root = workbench
    shutil.copytree(root / KITCHEN, root / "names")
    show(page, f"{url}/task/names")
    assert page.evaluate("getComputedStyle(document.querySelector('.cm-gutters')).display") == "flex"  # its styles pass the CSP
    # hover on a predicate in the problem: its declaration in the domain and where it is used
    where = """(() => { const v = SafeforgeEditor.viewOf(document.querySelector('.editor[data-file="safety_problem.pddl"]'));
             const c = v.coordsAtPos(v.state.doc.toString().indexOf('floor_dirty kitchen') + 3);
             return {x: c.left + 1, y: (c.top + c.bottom) / 2}; })()"""
    page.evaluate(f"window.scrollBy(0, {where}.y - 384)")
    seen: list[dict] = []
    eventually(lambda: seen.append(page.evaluate(where)) or seen[-2:] == [seen[-1]] * 2, "the scrolling settled", every=0.1)
    box = seen[-1]
    page.call("Input.dispatchMouseEvent", type="mouseMoved", x=box["x"], y=box["y"])
    page.wait_for("document.querySelector('.cm-tooltip-hover .cm-symbol') !== null", "the hover")
    told = page.evaluate("document.querySelector('.cm-tooltip-hover .cm-symbol').innerText")
    assert told.split("\n")[:2] == ["predicate floor_dirty", "(floor_dirty ?r - room)"]
    assert "declared at safety_domain.pddl:" in told and "safety_problem.pddl:" in told and "used 3×" in told
    # F12 on it: the declaration, selected in the domain's editor
    select_in_editor(page, "safety_problem.pddl", "floor_dirty")
    press(page, "F12", 123)
    assert selection(page, "safety_domain.pddl") == "floor_dirty"
    assert page.evaluate("document.activeElement.closest('.editor').dataset.file") == "safety_domain.pddl"
    # completion of declared names
    select_in_editor(page, "safety_problem.pddl", "(hands_free)")
    page.call("Input.insertText", text="(hands_free) (floor_")
    page.wait_for("document.querySelector('.cm-tooltip-autocomplete') !== null", "the completions")
    offered = page.evaluate("[...document.querySelectorAll('.cm-tooltip-autocomplete .cm-completionLabel')].map(l => l.textContent)")
    assert {"floor_clean", "floor_wet", "floor_dirty"} <= set(offered)
    press(page, "Escape", 27)
    replace_in_editor(page, "safety_problem.pddl", "(hands_free) (floor_", "(hands_free)")
    # F2 renames an object in both files (here: its four places in the problem)
    page.evaluate("window.prompt = () => 'stock_pot'")
    select_in_editor(page, "safety_problem.pddl", "soup_pot")
    press(page, "F2", 113)
    problem = editor_text(page, "safety_problem.pddl")
    assert "soup_pot" not in problem and problem.count("stock_pot") == 4
    page.evaluate("window.prompt = () => 'floor_soaked'")
    select_in_editor(page, "safety_domain.pddl", "floor_wet")
    press(page, "F2", 113)
    domain = editor_text(page, "safety_domain.pddl")
    assert "floor_wet" not in domain and domain.count("floor_soaked") == 6
    shutil.rmtree(root / "names")


def test_renaming_an_object_leaves_the_type_of_the_same_name(workbench):
    """F2 renames what a word means, not the word: an object `pot` of type `pot` renamed leaves the
    type, the type renamed leaves the object; a parameter is renamed in its action alone."""
    page, url, root = workbench
    folder = shutil.copytree(root / KITCHEN, root / "same_names")
    problem = folder / "safety_problem.pddl"
    problem.write_text(problem.read_text().replace("soup_pot", "pot"))  # the object `pot`, of type `pot`
    show(page, f"{url}/task/same_names")
    page.evaluate("window.prompt = () => 'stock_pot'")
    select_in_editor(page, "safety_problem.pddl", "(pot_at pot")
    press(page, "F2", 113)
    renamed = editor_text(page, "safety_problem.pddl")
    assert "stock_pot - pot" in renamed and renamed.count("stock_pot") == 4
    assert re.findall(r"(?<![\w-])pot(?![\w-])", renamed) == ["pot"]  # only the type
    assert editor_text(page, "safety_domain.pddl") == (folder / "safety_domain.pddl").read_text()  # the type is left as it was
    page.evaluate("window.prompt = () => 'vessel'")
    select_in_editor(page, "safety_domain.pddl", "?p - pot")
    press(page, "F2", 113)
    domain = editor_text(page, "safety_domain.pddl")
    assert "(:types room vessel towel)" in domain and "- pot" not in domain and "(pot_at ?p - vessel" in domain
    assert "stock_pot - vessel" in editor_text(page, "safety_problem.pddl") and "pot_at" in domain  # the predicate kept its name
    page.evaluate("window.prompt = () => 'place'")
    select_in_editor(page, "safety_domain.pddl", ":parameters (?r")  # in mop_floor
    press(page, "F2", 113)
    domain = editor_text(page, "safety_domain.pddl")
    mop_floor = domain[domain.index("(:action mop_floor") : domain.index("(:action dry_floor")]
    assert "?r" not in mop_floor and mop_floor.count("?place") == 6 and "?r" in domain.replace(mop_floor, "")
    shutil.rmtree(folder)


THREE_SYNTAX_ERRORS = [  # (file, text, broken): in the predicates, an action and the problem's :init
    ("safety_domain.pddl", "    (hands_free)\n", "    (hands_free\n"),
    ("safety_domain.pddl", ":effect (and (floor_clean ?r)", ":effekt (and (floor_clean ?r)"),
    ("safety_problem.pddl", "(towel_in floor_towel kitchen)", "(towel_in floor_towel kitchen"),
]


def test_three_syntax_errors_are_three_diagnostics_at_their_lines_and_columns(workbench):
    page, url, root = workbench
    folder = shutil.copytree(root / KITCHEN, root / "three_errors")
    show(page, f"{url}/task/three_errors")
    for file, text, broken in THREE_SYNTAX_ERRORS:
        replace_in_editor(page, file, text.strip(), broken.strip())
    page.wait_for("document.querySelectorAll('.file-diagnostics li').length === 3", "three diagnostics", timeout=120)
    listed = {}
    for file in ("safety_domain.pddl", "safety_problem.pddl"):
        listed[file] = page.evaluate(
            f"[...document.querySelectorAll('.editor[data-file=\"{file}\"] .file-diagnostics li')].map(l => l.textContent)"
        )
    texts = {file: editor_text(page, file).splitlines() for file in listed}
    places = [(file, int(m[1]), int(m[2])) for file, items in listed.items() for m in (re.match(r"line (\d+):(\d+): ", i) for i in items)]
    assert [texts[file][line - 1][column - 1 :].split()[0] for file, line, column in places] == ["(hands_free", ":effekt", "(towel_in"]
    assert underlined(page, "safety_domain.pddl") == ["(hands_free", ":effekt"] and underlined(page, "safety_problem.pddl") == ["(towel_in"]
    shutil.rmtree(folder)


# -- never waiting ---------------------------------------------------------------------------------------
def test_a_long_check_shows_its_progress_and_stops(workbench):
    page, url, root = workbench
    folder = write_hard_task(root / "slow_bleach")  # its planners run until the 20 s limit
    page.call("Page.navigate", url=f"{url}/task/slow_bleach")
    page.wait_for("document.getElementById('check-status')?.textContent.startsWith('checking: ')", "the check's progress")
    status = page.evaluate("document.getElementById('check-status').textContent")
    assert re.fullmatch(r"checking: .+ \(\d+\.\d s of 20 s\)", status), status
    assert page.evaluate("document.getElementById('stop').hidden") is False
    page.evaluate("document.getElementById('stop').click()")
    page.wait_for("document.getElementById('check-status').textContent.startsWith('check stopped')", "the stop")
    assert page.evaluate("document.getElementById('stop').hidden") is True
    shutil.rmtree(folder)
