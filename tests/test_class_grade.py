"""``uncertainty-lab class grade``: a tiny instructor notebook with a recorded model request, graded for a class of
real submissions — solved, raising, looping, and hostile ones (reading /etc/passwd, deleting and writing outside
their folder) — in one run on two worker processes; then a rerun that reuses what did not change. No live model: the
recording is made here by a fake backend under the embedded backend's name, and the kernels replay it."""

from __future__ import annotations

import csv
import hashlib
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from fakes import EchoLLM

from uncertainty_lab.classroom import student_version
from uncertainty_lab.classroom.gradebook import Gradebook, csv_safe, feedback_html
from uncertainty_lab.classroom.guard import _Policy
from uncertainty_lab.cli import main as cli_main
from uncertainty_lab.llm.cache import CompletionCache

QUESTION = "What is two?"


@dataclass
class RecordedAsEmbedded(EchoLLM):
    """Records under the embedded backend's name, which ``UL_LLM=replay`` replays."""

    def cache_backend_name(self) -> str:
        return "embedded"


def _cell(source: str, grade_id: str, *, check: bool, points: float = 0) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell(source, metadata={"nbgrader": {
        "grade": check, "grade_id": grade_id, "points": points, "solution": not check, "schema_version": 3}})


def instructor() -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        _cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION", "ex_double", check=False),
        _cell("assert double(2) == 4\n### BEGIN HIDDEN TESTS\nassert double(-3) == -6, 'negative numbers'\n"
              "### END HIDDEN TESTS", "check_double", check=True, points=2),
        nbformat.v4.new_code_cell("SEED = 0"),
        _cell(f"from uncertainty_lab.llm import get_llm\nanswer = get_llm('auto').complete({QUESTION!r}, seed=SEED, "
              "max_tokens=8)[0].text\nassert answer.startswith('Answer:')", "check_model", check=True, points=1),
        nbformat.v4.new_code_cell("raise SystemExit('cells after the last check are not run')"),
    ]
    return nb


def submission(body: str, *, seed_cell: str = "SEED = 0") -> nbformat.NotebookNode:
    nb = student_version(instructor())
    nb.cells[0].source = nb.cells[0].source.replace("    raise NotImplementedError()", body)
    nb.cells[2].source = seed_cell
    return nb


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    root = tmp_path_factory.mktemp("class")
    cache = CompletionCache(root / "recording" / "completions.sqlite")
    RecordedAsEmbedded(cache=cache).complete(QUESTION, seed=0, max_tokens=8)
    cache.export(root / "class.sqlite")
    cache.close()
    (root / "notebooks").mkdir()
    nbformat.write(instructor(), root / "notebooks" / "tiny.ipynb")
    sentinel = root / "sentinel.txt"
    sentinel.write_text("keep me")
    bodies = {
        "ada": ("    return 2 * x", "SEED = 0"),
        "bob": ("    raise ValueError('boom')", "SEED = 0"),
        "cy": ("    while True:\n        pass", "SEED = 0"),
        "dee": ("    return len(open('/etc/passwd').read()) * 0 + 2 * x", "SEED = 0"),
        "eve": (f"    import os\n    os.remove({str(sentinel)!r})\n    return 2 * x", "SEED = 0"),
        "fay": (f"    open({str(root / 'outside.txt')!r}, 'w').write('x')\n    return 2 * x", "SEED = 0"),
        "gus": (f"    return 2 * x + 0 * len(open({str(root / 'submitted/ada/lab1/tiny.ipynb')!r}).read())",
                "SEED = 0"),  # reads a sibling's notebook
        "hal": ("    return 2 * x", "SEED = 7"),  # its model request was never recorded
        "ivy": ("    import os\n    assert 'UL_COURSE_API_TOKEN' not in os.environ, os.environ['UL_COURSE_API_TOKEN']"
                "\n    return 2 * x", "SEED = 0"),  # looks for the grader's secrets
    }
    for student, (body, seed_cell) in bodies.items():
        folder = root / "submitted" / student / "lab1"
        folder.mkdir(parents=True)
        nbformat.write(submission(body, seed_cell=seed_cell), folder / "tiny.ipynb")
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "submitted").rglob("*") if p.is_file()}
    args = ["class", "grade", str(root / "submitted"), "--source", str(root / "notebooks"), "--recording",
            str(root / "class.sqlite"), "--out", str(root / "grades"), "--timeout", "15", "--workers", "2"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UL_COURSE_API_TOKEN", "s3cret-of-the-grader")
        code = cli_main(args)
    return root, args, code, before


def _rows(root: Path) -> dict[tuple[str, str], dict[str, str]]:
    with open(root / "grades" / "gradebook.csv", newline="", encoding="utf-8") as f:
        return {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}


def test_each_submission_gets_its_points_or_its_problem(graded):
    root, _, code, _ = graded
    assert code == 0
    rows = _rows(root)
    got = {k: (r["points"], r["status"]) for k, r in rows.items()}
    assert got[("ada", "check_double")] == ("2.0", "passed") and got[("ada", "check_model")] == ("1.0", "passed")
    assert got[("bob", "check_double")] == ("0.0", "failed") and rows[("bob", "check_double")]["reason"] == (
        "ValueError: boom")
    assert got[("bob", "check_model")] == ("1.0", "passed")  # a raising exercise harms no other check
    assert got[("cy", "check_double")] == ("0.0", "timeout") and got[("cy", "check_model")] == ("1.0", "passed")
    for student, what in [("dee", "read /etc/passwd"), ("eve", "change " + str(root / "sentinel.txt")),
                          ("fay", "write " + str(root / "outside.txt")),
                          ("gus", "read " + str(root / "submitted/ada/lab1/tiny.ipynb"))]:
        for check in ("check_double", "check_model"):
            assert got[(student, check)] == ("0.0", "refused"), (student, check)
            assert f"the submission tried to {what}" in rows[(student, check)]["reason"]
    assert (root / "sentinel.txt").read_text() == "keep me" and not (root / "outside.txt").exists()
    assert got[("ivy", "check_double")] == ("2.0", "passed")  # the grader's token is not in a kernel's environment
    assert "s3cret" not in (root / "grades" / "feedback" / "ivy.html").read_text(encoding="utf-8")


def test_secrets_are_left_out_of_a_kernels_environment():
    from uncertainty_lab.classroom.grading import without_secrets

    env = {"PATH": "/bin", "HOME": "/h", "UL_LLM": "replay", "OPENAI_API_KEY": "k", "JUPYTERHUB_API_TOKEN": "t",
           "AWS_SECRET_ACCESS_KEY": "a", "GITHUB_TOKEN": "g", "PGPASSWORD": "p", "SSH_AUTH_SOCK": "/s",
           "HF_TOKEN": "h", "DATABASE_URL": "postgres://u:p@h/db"}
    assert without_secrets(env) == {"PATH": "/bin", "HOME": "/h", "UL_LLM": "replay"}


def test_an_answer_missing_from_the_recording_is_the_students_problem(graded):
    root = graded[0]
    rows = _rows(root)
    assert (rows[("hal", "check_double")]["points"], rows[("hal", "check_double")]["status"]) == ("2.0", "passed")
    assert (rows[("hal", "check_model")]["points"], rows[("hal", "check_model")]["status"]) == ("0.0", "unrecorded")
    assert "no recorded answer" in rows[("hal", "check_model")]["reason"]
    assert "seed=7" in rows[("hal", "check_model")]["reason"]


def test_the_submitted_folder_is_untouched_and_feedback_is_written(graded):
    root, _, _, before = graded
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in (root / "submitted").rglob("*") if p.is_file()}
    assert after == before
    page = (root / "grades" / "feedback" / "bob.html").read_text(encoding="utf-8")
    assert "ValueError: boom" in page and "check_double" in page and "<script" not in page
    assert "| ada | lab1 | 3/3 | graded |" in (root / "grades" / "summary.md").read_text(encoding="utf-8")


def test_a_rerun_grades_only_what_changed(graded, monkeypatch):
    """Run last among the tests that read the fixture's grades: it changes one submission."""
    root, args, _, _ = graded
    import uncertainty_lab.classroom.grading as grading

    graded_now = []

    def fake(data, name, checks, **_):
        graded_now.append(data)
        return {"checks": [{"grade_id": g, "points": p, "max_points": p, "status": "passed", "reason": ""}
                           for g, (_, p) in checks.items()], "status": "graded", "seconds": 0.0}

    monkeypatch.setattr(grading, "grade_submission", fake)
    serial = args[:-2] + ["--executor", "serial"]
    assert cli_main(serial) == 0 and graded_now == []  # nothing changed: every result file reused
    changed = root / "submitted" / "bob" / "lab1" / "tiny.ipynb"
    nbformat.write(submission("    return x + x"), changed)
    assert cli_main(serial) == 0 and graded_now == [changed.read_bytes()]
    assert _rows(root)[("bob", "check_double")]["status"] == "passed"
    assert _rows(root)[("cy", "check_double")]["status"] == "timeout"  # reused


def test_student_text_is_escaped_in_feedback_and_csv():
    record = {"student": "<img src=x onerror=alert(1)>", "lab": "l<b>", "notebook": "n.ipynb", "status": "graded",
              "checks": [{"grade_id": "c", "points": 0.0, "max_points": 1.0, "status": "failed",
                          "reason": "AssertionError: </pre><script>alert(2)</script>"}]}
    page = feedback_html(record["student"], [record])
    assert "<script>" not in page and "<img" not in page and "&lt;script&gt;" in page
    assert "default-src 'none'" in page
    assert [csv_safe(v) for v in ("=HYPERLINK(1)", "+1", "-x", "@a", "plain", 3.0)] == [
        "'=HYPERLINK(1)", "'+1", "'-x", "'@a", "plain", 3.0]
    book = Gradebook(config=None, records=[dict(record, student="=cmd|' /C calc'!A0")])
    assert "\n'=cmd|" in book.csv_text()


def test_the_guard_policy_allows_the_folder_and_refuses_the_rest(tmp_path, monkeypatch):
    work = tmp_path / "work"
    work.mkdir()
    repo = tmp_path / "repo"  # a folder on sys.path (an editable install's repository): its metadata may be read
    (repo / "pkg.egg-info").mkdir(parents=True)
    (repo / "notebooks").mkdir()
    monkeypatch.syspath_prepend(str(repo))
    policy = _Policy(str(work), (str(tmp_path / "lib"),), (), log=None)
    assert policy.problem("open", (str(repo / "pkg.egg-info" / "entry_points.txt"), "r", 0)) is None
    assert policy.problem("os.listdir", (str(repo),)) is None
    assert "read" in policy.problem("open", (str(repo / "notebooks" / "lab.ipynb"), "r", 0))
    assert "read" in policy.problem("os.listdir", (str(repo / "notebooks"),))
    assert policy.problem("open", (str(work / "a.txt"), "w", 0)) is None
    assert policy.problem("open", (str(tmp_path / "lib" / "x.py"), "r", 0)) is None
    assert "write" in policy.problem("open", (str(tmp_path / "lib" / "x.py"), "a", 0))
    assert "read /etc/passwd" in policy.problem("open", ("/etc/passwd", "r", 0))
    assert "change" in policy.problem("os.rename", (str(work / "a"), str(tmp_path / "b"), None, None))
    assert "starts a process" in policy.problem("subprocess.Popen", ("sh", ["sh"], None, None))
    assert policy.problem("os.mkdir", (str(tmp_path), 0o777, None)) is None  # exists already: nothing changes
    assert "open the database" in policy.problem("sqlite3.connect", (f"file:{tmp_path / 'other.sqlite'}?mode=ro",))
    (work / "link").symlink_to("/etc/passwd")
    assert "read /etc/passwd" in policy.problem("open", (str(work / "link"), "r", 0))


def test_the_readme_command_is_the_one_the_cli_takes_and_help_lists_class(capsys):
    from uncertainty_lab.cli import build_parser

    readme = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")
    line = next(x.strip() for x in readme.splitlines() if "uncertainty-lab class grade" in x and "```" not in x
                and x.strip().startswith(".venv/bin/uncertainty-lab"))
    args = build_parser().parse_args(line.split()[1:])
    assert (args.submitted, args.source, args.recording, args.out) == ("submitted", "notebooks", "class.sqlite", "grades/")
    with pytest.raises(SystemExit):
        cli_main(["--help"])
    assert "class" in capsys.readouterr().out.split("COMMAND", 2)[-1]


def test_a_kernel_starts_from_the_reference_embeddings_and_loads_no_model(tmp_path, monkeypatch):
    import numpy as np

    from uncertainty_lab import embeddings

    monkeypatch.setattr(embeddings, "_caches", {})
    monkeypatch.setattr(embeddings, "_loaded_files", set())
    first = embeddings.Embedder()
    vectors = np.eye(3, dtype=np.float32)
    first._cache.update({"Canberra.": vectors[0], "Sydney.": vectors[1], "nul\x00": vectors[2]})
    path = tmp_path / "embeddings.npz"
    assert embeddings.save_embeddings(path) == 2  # a text with NUL is left out (numpy strings drop trailing NULs)
    monkeypatch.setattr(embeddings, "_caches", {})
    monkeypatch.setenv(embeddings.EMBEDDINGS_FILE_ENV, str(path))
    def no_model(self):
        raise RuntimeError("the model was loaded")

    monkeypatch.setattr(embeddings.Embedder, "_model", no_model)
    again = embeddings.Embedder()
    assert np.array_equal(again.encode(["Sydney.", "Canberra.", "Sydney."]), vectors[[1, 0, 1]])
    assert "nul\x00" not in again._cache
    with pytest.raises(RuntimeError, match="the model was loaded"):
        again.encode(["a text not in the file"])
    path.write_bytes(b"not an npz")
    monkeypatch.setattr(embeddings, "_caches", {})
    monkeypatch.setattr(embeddings, "_loaded_files", set())
    with pytest.warns(UserWarning, match="could not be read"):
        embeddings.Embedder()


def test_class_student_writes_the_student_copies_as_make_student_does(tmp_path, capsys):
    source = tmp_path / "notebooks"
    source.mkdir()
    nbformat.write(instructor(), source / "tiny.ipynb")
    assert cli_main(["class", "student", str(source), "--out", str(tmp_path / "student")]) == 0
    assert "1 exercises, 2 checks" in capsys.readouterr().out
    copy = nbformat.read(tmp_path / "student" / "tiny.ipynb", as_version=4)
    assert "raise NotImplementedError()" in copy.cells[0].source and "HIDDEN" not in copy.cells[1].source


def test_a_kernel_that_keeps_running_over_is_stopped_and_the_rest_is_not_run(tmp_path):
    from uncertainty_lab.classroom.grading import _read_roots
    from uncertainty_lab.classroom.submission import MAX_TIMEOUTS, grade_submission
    from uncertainty_lab.tour import kernel_env

    assert MAX_TIMEOUTS == 2
    nb = nbformat.v4.new_notebook()
    loop = "import time\nwhile True:\n    try:\n        time.sleep(1)\n    except KeyboardInterrupt:\n        pass"
    nb.cells = [nbformat.v4.new_code_cell(loop), _cell("assert True", "first", check=True, points=1),
                nbformat.v4.new_code_cell("x = 1"), _cell("assert x == 1", "second", check=True, points=1)]
    recording = tmp_path / "completions.sqlite"
    recording.write_bytes(b"")
    checks = {"first": ("assert True", 1.0), "second": ("assert x == 1", 1.0)}
    outcome = grade_submission(nbformat.writes(nb).encode(), "loop.ipynb", checks, recording=recording,
                               env=kernel_env(fast=True), timeout=3, read_roots=_read_roots())
    first, second = outcome["checks"]
    # the loop swallows the interrupt, so the check after it waits, runs over too (no error output of its own), and
    # the kernel is stopped: the check is a timeout, the rest is not run
    assert (first["points"], first["status"], first["reason"]) == (0.0, "timeout", "the cell ran over the 3 s limit "
                                                                                   "and was interrupted")
    assert (second["points"], second["status"]) == (0.0, "not-run") and "ran over the 3 s limit" in second["reason"]
    assert outcome["status"] == "timeout"


@pytest.mark.parametrize("fast, recorded, expected", [
    (None, {"fast"}, True), (None, {"full"}, False), (None, {"fast", "full"}, False), (None, set(), False),
    (True, {"fast", "full"}, True), (True, set(), True), (False, {"full"}, False)])
def test_the_kernels_replay_in_the_mode_the_recording_holds(fast, recorded, expected):
    from uncertainty_lab.classroom.grading import GradeConfig, kernel_mode

    assert kernel_mode(GradeConfig(fast=fast), frozenset(recorded)) is expected


@pytest.mark.parametrize("fast, recorded, lacks", [(True, {"full"}, "fast"), (False, {"fast"}, "full")])
def test_grading_in_a_mode_the_recording_lacks_is_one_line_before_anything_runs(fast, recorded, lacks):
    from uncertainty_lab.classroom.grading import GradeConfig, GradingError, kernel_mode

    with pytest.raises(GradingError, match=rf"holds {next(iter(recorded))}-mode answers .* this run is in {lacks} "
                                           r"mode .*: grade in the recorded mode") as info:
        kernel_mode(GradeConfig(fast=fast), frozenset(recorded))
    assert "\n" not in str(info.value)
