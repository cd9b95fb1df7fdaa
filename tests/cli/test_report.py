"""`anvil report`: a run database as one HTML file, drawn in headless Chromium (Debian's `chromium`, installed by
scripts/setup.sh). Its table is the one `anvil kernelbench --run RUN --json` gives; model and candidate text planted
with `</script><img onerror=...>` and `<!--` shows as text and runs nothing, with the page's Content-Security-Policy
and without it."""

import base64
import gzip
import html
import json
import re
import shutil
import sqlite3
import subprocess

import pytest

from conftest import EXAMPLES, NO_KEYS, ModelServer, cache_dir, run_anvil

RELU = EXAMPLES / "candidates" / "relu"
PAYLOAD = "</script><img src=x onerror=\"document.body.setAttribute('data-pwned', 1)\"><!-- <script>alert(1)</script>"


def fenced(text):
    return f"Here is my kernel.\n\n```python\n{text}```\n"


def chromium():
    for name in ("chromium", "chromium-browser"):
        if shutil.which(name):
            return name
    pytest.fail("chromium is missing: run scripts/setup.sh (it installs Debian's chromium)")


def dom(page, fragment=""):
    """The page's DOM after its scripts ran, as headless Chromium serializes it."""
    proc = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--virtual-time-budget=5000", "--dump-dom", page.as_uri() + fragment],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("report")
    tasks = tmp / "tasks" / "level1"
    tasks.mkdir(parents=True)
    shutil.copy(EXAMPLES / "tasks" / "relu.py", tasks / "19_ReLU.py")
    wrong = (RELU / "wrong_answer_kb.py").read_text() + f"\n# {PAYLOAD}\n"
    server = ModelServer(tmp, [{"content": fenced((RELU / "pass_kb.py").read_text())},
                               {"content": PAYLOAD + "\n" + fenced(wrong)},
                               {"content": "No code from me. " + PAYLOAD},
                               {"content": fenced((RELU / "pass_kb.py").read_text())},
                               {"content": "Still no code. " + PAYLOAD}])
    try:
        out = tmp / "run.db"
        proc = run_anvil("generate", "--endpoint", server.url, "--model", "test-model", "--tasks", str(tmp / "tasks"),
                         "--out", str(out), "--trials", "2", "--cache-dir", cache_dir(),
                         "--concurrency", "1", "--samples", "3", "--turns", "2", env=NO_KEYS, timeout=900)
        assert proc.returncode == 0, proc.stderr[-3000:]
    finally:
        server.stop()
    page = tmp / "report.html"
    proc = run_anvil("report", str(out), "-o", str(page))
    assert proc.returncode == 0, proc.stderr
    assert "3 sample(s) of 1 problem(s)" in proc.stdout
    return out, page


def embedded(text):
    match = re.search(r'<script type="application/json" id="anvil-data">(.*?)</script>', text, re.S)
    assert match, "no anvil-data element"
    return json.loads(match.group(1))


def texts(text, chunk):
    match = re.search(rf'<script type="application/x-anvil-gzip-base64" id="anvil-text-{chunk}">([A-Za-z0-9+/=]*)'
                      r"</script>", text)
    assert match, f"no text chunk {chunk}"
    return json.loads(gzip.decompress(base64.b64decode(match.group(1))))


def test_the_texts_are_embedded_compressed_and_drawn_on_demand(run):
    out, page = run
    text = page.read_text()
    data = embedded(text)
    attempts = [a for s in data["samples"] for a in s["attempts"]]
    assert len(attempts) == 5 and all("code" not in a and "response" not in a for a in attempts)
    sqlite = sqlite3.connect(out)
    for s in data["samples"]:
        for a in s["attempts"]:
            t = texts(text, a["text"][0])[a["text"][1]]
            code, verdict = sqlite.execute(
                "SELECT attempt.code, attempt.verdict_json FROM attempt JOIN sample ON sample.id = attempt.sample_id "
                "WHERE sample.idx = ? AND attempt.turn = ?", (s["sample"], a["turn"])).fetchone()
            assert t["code"] == code and t["verdict"] == (json.loads(verdict) if verdict else None)
    assert "Here is my kernel." not in text  # no answer is in the page as it is
    assert re.search(r'<html lang="en" data-ready="1" data-load-ms="\d+"', dom(page))


def test_the_table_is_anvil_kernelbenchs(run):
    out, page = run
    data = embedded(page.read_text())
    proc = run_anvil("kernelbench", "--run", str(out), "--json")
    assert proc.returncode == 0, proc.stderr
    assert data["metrics"] == json.loads(proc.stdout)
    # Drawn: every cell of every turn's table holds the JSON's value.
    shown = dom(page)
    assert 'data-ready="1"' in shown  # the script ran, allowed by its hash
    for turn in data["metrics"]["turns"]:
        table = re.search(rf'<table class="metrics" data-turn="{turn["turn"]}">(.*?)</table>', shown, re.S).group(1)
        cells = dict(re.findall(r'<tr class="all">.*?</tr>', table, re.S) and
                     re.findall(r'data-key="([a-z_0-9.]+)" data-value="([^"]*)"',
                                re.search(r'<tr class="all">(.*?)</tr>', table, re.S).group(1)))
        overall = turn["overall"]
        assert json.loads(html.unescape(cells["pass_at_1"])) == overall["pass_at_k_pct"]["1"]
        assert json.loads(html.unescape(cells["pass_at_n"])) == overall["pass_at_k_pct"]["3"]
        assert json.loads(html.unescape(cells["avg_at_n"])) == overall["avg_at_n_pct"]
        assert json.loads(html.unescape(cells["samples"])) == 3
    # By hand: turn 1 passes sample 0 of 3; turn 2 repairs sample 1 (its second answer passes), not sample 2.
    assert [t["overall"]["passed"] for t in data["metrics"]["turns"]] == [1, 2]
    assert data["metrics"]["turns"][0]["overall"]["pass_at_k_pct"]["1"] == pytest.approx(100 / 3)


def test_planted_markup_stays_text_with_and_without_the_policy(run, tmp_path):
    _, page = run
    text = page.read_text()
    assert PAYLOAD not in text and "<!--" not in text and "<img" not in text  # escaped in the data
    assert "default-src 'none'" in text and "'unsafe-inline'" not in text
    assert "innerHTML" not in text and "insertAdjacentHTML" not in text and "document.write" not in text
    data = embedded(text)
    sample = next(i for i, s in enumerate(data["samples"]) if s["sample"] == 1)
    bare = tmp_path / "no_policy.html"
    bare.write_text(re.sub(r'<meta http-equiv="Content-Security-Policy"[^>]*>', "", text))
    assert "Content-Security-Policy" not in bare.read_text()
    for p in (page, bare):
        shown = dom(p, f"#c/{sample}/1")
        assert f'data-shown="c/{sample}/1"' in shown  # the candidate's page, drawn from its compressed texts
        assert 'data-ready="1"' in shown and not re.search(r"<body[^>]*data-pwned", shown)  # nothing ran
        assert "<img" not in shown and "<!--" not in shown  # no element, no comment: text
        answer = re.search(r'<pre class="text-answer">(.*?)</pre>', shown, re.S).group(1)
        assert PAYLOAD in html.unescape(answer)
        code = re.search(r'<pre class="text-code">(.*?)</pre>', shown, re.S).group(1)
        assert PAYLOAD in html.unescape(code)


def test_a_script_the_policy_does_not_name_does_not_run(run, tmp_path):
    _, page = run
    changed = tmp_path / "changed.html"
    changed.write_text(page.read_text().replace('"use strict";', '"use strict"; ', 1))
    assert 'data-ready="1"' not in dom(changed)  # its hash no longer matches


def test_what_it_refuses(run, tmp_path):
    notdb = tmp_path / "notes.txt"
    notdb.write_text("hello")
    proc = run_anvil("report", str(notdb), "-o", str(tmp_path / "r.html"))
    assert proc.returncode == 2 and "not a run database" in proc.stderr and not (tmp_path / "r.html").exists()
    proc = run_anvil("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert proc.returncode == 2 and "has no verdicts" in proc.stderr and "anvil kernelbench --run" in proc.stderr
    out, _ = run
    proc = run_anvil("report", str(out), "-o", str(tmp_path / "missing" / "r.html"))
    assert proc.returncode == 1 and "cannot write" in proc.stderr


def marks(shown, cls, tag="rect"):
    """(data-series, data-group, value) of each mark of the plot of class `cls`."""
    plot = re.search(rf'<svg class="plot {cls}"(.*?)</svg>', shown, re.S)
    assert plot, f"no plot {cls}"
    return [(html.unescape(a), html.unescape(b), json.loads(html.unescape(c))) for a, b, c in
            re.findall(rf'<{tag} [^>]*data-series="([^"]*)" data-group="([^"]*)" data-value="([^"]*)"', plot.group(1))]


def test_the_plots_and_the_grid_say_what_the_run_holds(run):
    out, page = run
    data = embedded(page.read_text())
    shown = dom(page)
    # Pass rate by turn: the table's Avg@N of each turn.
    bars = marks(shown, "plot-pass-by-turn")
    assert [(g, v) for s, g, v in bars if s == "all"] == [
        (f"turn {t['turn']}", t["overall"]["avg_at_n_pct"]) for t in data["metrics"]["turns"]]
    # Each turn's attempts by outcome, as the database counts them.
    db = sqlite3.connect(out)
    counts = {(f"turn {t}", o): c for t, o, c in db.execute(
        "SELECT turn, coalesce(outcome, state), count(*) FROM attempt GROUP BY 1, 2")}
    assert {(g, s): v for s, g, v in marks(shown, "plot-outcomes") if v} == counts
    assert counts == {("turn 1", "pass"): 1, ("turn 1", "wrong_answer"): 1, ("turn 1", "no_code"): 1,
                      ("turn 2", "pass"): 1, ("turn 2", "no_code"): 1}
    # Speedups of the passing samples' best attempts, binned: as many as passed with a speedup.
    passed = db.execute("SELECT count(DISTINCT sample_id) FROM attempt WHERE outcome = 'pass'").fetchone()[0]
    for key in ("eager", "compile"):
        assert sum(v for _, _, v in marks(shown, f"plot-speedup-{key}")) == passed == 2
    # Time per stage: the sums of the database's stage times.
    stages = dict(db.execute("SELECT stage, sum(seconds) FROM stage_time GROUP BY stage"))
    drawn = {k: float(v) for k, v in re.findall(r'data-stage="([a-z_]+)" data-value="([^"]+)"', shown)}
    assert drawn.keys() == stages.keys() and {"generate", "judge"} <= drawn.keys()
    assert all(abs(drawn[k] - stages[k]) < 1e-9 for k in stages)
    # The grid: one cell per sample, its last outcome, a link to its last attempt.
    grid = re.search(r'<table class="grid">(.*?)</table>', shown, re.S).group(1)
    cells = re.findall(r'<a href="#c/(\d+)/(\d+)" class="status [^"]*" data-outcome="([a-z_]+)"', grid)
    last = {s: (t, o) for s, t, o in db.execute(
        "SELECT sample.idx, attempt.turn, attempt.outcome FROM attempt JOIN sample ON sample.id = attempt.sample_id "
        "ORDER BY attempt.turn")}
    assert sorted((data["samples"][int(i)]["sample"], int(t), o) for i, t, o in cells) == sorted(
        (s, t, o) for s, (t, o) in last.items())


def test_a_kernelbench_folder_judged_by_anvil_kernelbench(tmp_path):
    from test_kernelbench import kernelbench, make_run

    root, folder = make_run(tmp_path)
    proc = run_anvil("report", str(folder), "-o", str(tmp_path / "early.html"))
    assert proc.returncode == 2 and "judge it first with anvil kernelbench" in proc.stderr
    judged, _ = kernelbench(root, folder)
    page = tmp_path / "kb.html"
    proc = run_anvil("report", str(folder), "-o", str(page))
    assert proc.returncode == 0, proc.stderr
    assert "3 sample(s) of 2 problem(s)" in proc.stdout
    data = embedded(page.read_text())
    (turn,) = data["metrics"]["turns"]
    assert turn["levels"] == judged["levels"] and turn["overall"] == judged["overall"]
    assert [t["name"] for t in data["tasks"]] == ["1_ReLU", "3_Softmax"]
    # Each candidate's page holds its file's code and its verdict.
    text = page.read_text()
    for s in data["samples"]:
        (a,) = s["attempts"]
        t = texts(text, a["text"][0])[a["text"][1]]
        name = f"level_{data['tasks'][s['task']]['level']}_problem_{data['tasks'][s['task']]['problem']}" \
               f"_sample_{s['sample']}_kernel.cpp"
        assert t["code"] == (folder / name).read_text() and t["verdict"]["status"] == a["outcome"]
    shown = dom(page, "#c/1/1")
    assert 'data-ready="1"' in shown and 'data-shown="c/1/1"' in shown


def test_a_screenshot_of_the_report_shows_it(run, tmp_path):
    _, page = run
    shot = tmp_path / "report.png"
    proc = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           "--hide-scrollbars", "--window-size=1280,1400", f"--screenshot={shot}", page.as_uri()],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", proc.stderr[-2000:]
    # A blank 1280x1400 page compresses to a few KB; the drawn tables and plots do not.
    assert shot.stat().st_size > 40_000, shot.stat().st_size
