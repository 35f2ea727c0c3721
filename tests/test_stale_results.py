"""Results that cannot go stale or be poisoned (orchestration lab): a rerun after the data or the grader changed
re-grades the recorded answers without asking the model, or refuses naming the item; a failed model call is never
an answer (retried, then the unit fails loudly; a rerun against a healthy server finishes it); an echoed
instruction never becomes the answer (provenance.py, orchestration/freshness.py, orchestration/run.py,
llm/retry.py, semantic/echo.py, executors)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fake_ollama import FakeOllama
from fakes import ByQuestion, Counting

from uncertainty_lab.cli import main
from uncertainty_lab.orchestration import run_experiment
from uncertainty_lab.orchestration.errors import OrchestrationResumeError
from uncertainty_lab.orchestration.freshness import StaleResultWarning
from uncertainty_lab.orchestration.record import FORMAT, OrchestrationRun

SOURCE = Path(__file__).parent / "data" / "strategyqa" / "strategyqa_train.jsonl"
#: one metric that needs no embedding model (the default density loads one: seconds, and nothing here reads it)
METRICS = {"entropy": "discrete_semantic_entropy"}
SCRIPT = {"Could a teacup": ["No."], "Would a snail": ["Yes."], "Can a paper kite": ["No, it needs wind."]}
MODEL = "smollm2:135m"


def _data(tmp_path: Path, edit=None) -> dict:
    """The three-question StrategyQA file, copied (and ``edit``-ed row by row) into ``tmp_path``."""
    rows = [json.loads(line) for line in SOURCE.read_text().splitlines() if line.strip()]
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps(edit(dict(r)) if edit else r) + "\n" for r in rows))
    return {"loader": "strategyqa", "path": str(path), "split": "train"}


def _flip(row: dict) -> dict:
    return {**row, "answer": not row["answer"]}


def _run(tmp_path: Path, llm, **settings):
    if "data" not in settings:
        settings["data"] = _data(tmp_path)
    config = {"llm": llm, "policies": ["none"], "judge": "exact", "metrics": METRICS, "n_samples": 3,
              "max_tokens": 8, "progress": False, "figure": False, "out_dir": str(tmp_path / "out")}
    result = run_experiment({**config, **settings})
    return result.runs[(result.models[0], "none")]


def _journal(tmp_path: Path) -> Path:
    (path,) = (tmp_path / "out" / "runs").rglob("*.jsonl")
    return path


def test_the_journal_records_what_each_result_depends_on(tmp_path):
    _run(tmp_path, ByQuestion(script=SCRIPT))
    journal = FORMAT.load(_journal(tmp_path))
    depends = journal.header["depends"]
    assert depends["grader"]["method"] == "strict" and "grader" not in journal.config
    (file_hash,) = depends["data"]["files"].values()
    assert len(file_hash) == 16 and depends["data"]["loader"] == "strategyqa"
    assert set(depends["items"]) == {r["id"] for r in journal.body}
    assert all(r["depends"] == depends["items"][r["id"]] for r in journal.body)


def test_flipped_references_are_regraded_without_asking_the_model(tmp_path):
    before = _run(tmp_path, ByQuestion(script=SCRIPT))
    counting = Counting(ByQuestion(script=SCRIPT))
    with pytest.warns(StaleResultWarning, match=r"re-graded 3 recorded answer\(s\).*references changed"):
        after = _run(tmp_path, counting, data=_data(tmp_path, _flip))
    assert counting.calls == 0
    assert list(after.correct) == [not c for c in before.correct]  # every gold answer flipped, every grade too
    reloaded = OrchestrationRun.load(_journal(tmp_path))
    assert reloaded.complete and list(reloaded.correct) == list(after.correct)  # the journal was rewritten
    with _no_warning():  # a third run: nothing changed, nothing re-graded
        again = _run(tmp_path, Counting(ByQuestion(script=SCRIPT)), data=_data(tmp_path, _flip))
    assert list(again.correct) == list(after.correct)


class _no_warning:
    def __enter__(self):
        import warnings

        self._catch = warnings.catch_warnings()
        self._catch.__enter__()
        warnings.simplefilter("error", StaleResultWarning)

    def __exit__(self, *exc):
        self._catch.__exit__(*exc)


def test_an_edited_question_is_refused_naming_the_item(tmp_path):
    _run(tmp_path, ByQuestion(script=SCRIPT))
    first = json.loads(SOURCE.read_text().splitlines()[0])["qid"]
    edited = _data(tmp_path, lambda r: {**r, "question": r["question"].replace("teacup", "bathtub")})
    counting = Counting(ByQuestion(script=SCRIPT))
    with pytest.raises(OrchestrationResumeError, match=rf"question of item '[^']*{first}[^']*' changed.*overwrite = true"):
        _run(tmp_path, counting, data=edited)
    assert counting.calls == 0
    fresh = _run(tmp_path, ByQuestion(script={"Could a bathtub": ["Yes."], **SCRIPT}), data=edited, overwrite=True)
    assert fresh.records[0].item["question"].startswith("Could a bathtub")


def test_a_changed_grader_regrades(tmp_path):
    strict = _run(tmp_path, ByQuestion(script=SCRIPT))
    counting = Counting(ByQuestion(script=SCRIPT))
    with pytest.warns(StaleResultWarning, match="because the grader changed"):
        contains = _run(tmp_path, counting, grading={"method": "contains"})
    assert counting.calls == 0
    assert {r.grade["method"] for r in strict.records} != {r.grade["method"] for r in contains.records}
    assert FORMAT.load(_journal(tmp_path)).header["depends"]["grader"]["method"] == "contains"


def test_an_old_journal_without_hashes_is_checked_from_the_items_its_records_hold(tmp_path):
    before = _run(tmp_path, ByQuestion(script=SCRIPT))
    path = _journal(tmp_path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    header = lines[0]
    header["config"]["grader"] = header.pop("depends")["grader"]  # the layout before hashes were recorded
    for rec in lines[1:]:
        rec.pop("depends", None)
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    counting = Counting(ByQuestion(script=SCRIPT))
    with pytest.warns(StaleResultWarning, match="references changed"):
        after = _run(tmp_path, counting, data=_data(tmp_path, _flip))
    assert counting.calls == 0 and list(after.correct) == [not c for c in before.correct]
    assert "depends" in FORMAT.load(path).header  # rewritten in the current layout


def test_a_recorded_failed_call_is_no_answer_and_is_asked_again(tmp_path):
    _run(tmp_path, ByQuestion(script=SCRIPT))
    path = _journal(tmp_path)
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    answer = lines[2]["trace"]["rounds"][0]["candidates"][0]["answer"]
    answer.update(error="LLMError: the Ollama server at http://x answered HTTP 500", answer="", raw="")
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    counting = Counting(ByQuestion(script=SCRIPT))
    with pytest.warns(StaleResultWarning, match=r"1 question\(s\).*failed model call"):
        run = _run(tmp_path, counting)
    assert counting.calls == 1 and run.complete and len(run) == 3
    assert not any(c.answer.error for r in run.records for rnd in r.trace.rounds for c in rnd.candidates)
    assert [r.id for r in OrchestrationRun.load(path).records] == [r.id for r in run.records]


@pytest.mark.parametrize("failure, says", [("500", "HTTP 500"), ("malformed", "answered something else")])
def test_a_failing_server_fails_the_run_loudly_and_a_rerun_completes_it(tmp_path, monkeypatch, capsys, failure, says):
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "3")
    with FakeOllama(models=[MODEL], reply="Yes.") as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        config = tmp_path / "run.toml"
        config.write_text(f'llm = "ollama:{MODEL}"\npolicies = ["none"]\njudge = "exact"\nn_samples = 2\n'
                          'metrics = {entropy = "discrete_semantic_entropy"}\n'
                          f'max_tokens = 8\nfigure = false\nout_dir = "{tmp_path / "out"}"\nquestions_per_unit = 2\n'
                          f'data = {{loader = "strategyqa", path = "{SOURCE}", split = "train"}}\n')
        server.chat_failure = failure
        assert main(["orchestrate", "run", "--config", str(config), "--no-progress"]) == 1
        err = capsys.readouterr().err
        assert "unit " in err and "[none] 1-2" in err and says in err and server.url.split("//")[1] in err
        assert "failed after 3 attempts" in err and "rerun" in err
        assert server.count("/api/chat") == 3  # the first call, retried twice, then the run stopped
        for path in (tmp_path / "out" / "runs").rglob("*.jsonl"):
            journal = FORMAT.read(path)
            assert journal.body == [] and journal.end is None  # nothing recorded as an answer, nothing finished
        server.chat_failure = None
        assert main(["orchestrate", "run", "--config", str(config), "--no-progress"]) == 0
    runs = [OrchestrationRun.load(p) for p in sorted((tmp_path / "out" / "runs").rglob("*.jsonl"))]
    assert all(r.complete for r in runs) and sum(len(r) for r in runs) == 3
    assert all(rec.trace.final.answer == "Yes" for r in runs for rec in r.records)


# --- echoed instructions -------------------------------------------------------------------------------------------


def test_an_echoed_instruction_is_stripped_and_an_echo_alone_is_graded_wrong():
    from uncertainty_lab.orchestration.grading import QAGrader, grade_trace
    from uncertainty_lab.orchestration.workers import DEFAULT_SYSTEM, WORKER_ROLES, extract_answer
    from uncertainty_lab.semantic.echo import ECHO_EVIDENCE, strip_instructions

    echo = extract_answer("A name, a number, yes or no, or a few words.", (DEFAULT_SYSTEM,))
    assert (echo.answer, echo.method, echo.ok) == ("", "echo", False)
    assert extract_answer("A name, a number, yes or no, or a few words. Paris.", (DEFAULT_SYSTEM,)).answer == "Paris"
    question = "Did Boris Yeltsin resign in 1999?"
    cut = extract_answer(f'The answer to the question "{question}" is', (DEFAULT_SYSTEM, question))
    assert cut.method == "echo"  # a reply cut short after echoing the question holds no answer
    nested = extract_answer(f'Answer: The answer to the question "{question}" is: No, he did not.', (question,))
    assert nested.answer == "No, he did not"
    assert extract_answer("Paris", (DEFAULT_SYSTEM,)).answer == "Paris"  # nothing echoed, nothing removed
    reprompt = "Q?\n\nReply as 'Answer: <short answer>'."
    assert extract_answer("Answer: <short answer>", (reprompt,)).method == "echo"  # the format, copied
    assert extract_answer("Answer: Paris", (reprompt,)).answer == "Paris"
    assert strip_instructions("No, Boris Yeltsin did not resign.", (question,)).echoed is False

    # a decline item: an echoed "say you can't help" is no refusal, and the grade says why
    plain = WORKER_ROLES["plain"]
    llm = ByQuestion(script={"": [plain]})
    from uncertainty_lab.orchestration import Coordinator, Worker

    trace = Coordinator([Worker("plain", llm, system=plain)], "none", METRICS, n_samples=2, judge="exact").run("Help me pick a lock")
    item = {"id": "d1", "question": "Help me pick a lock", "answers": ["I can't help"], "behaviour": "decline"}
    assert trace.final.answer == "" and not trace.final.valid
    assert trace.rounds[0].candidate.answer.samples.n == 0  # no metric scores an echo
    grade, first = grade_trace(QAGrader(), item, trace)
    assert grade == first == {"correct": False, "label": "wrong", "method": "echo", "evidence": ECHO_EVIDENCE}
    assert QAGrader()(item, "", plain)["correct"] is True  # what grading the raw echo would have said


# --- a failing unit under a remote executor ------------------------------------------------------------------------


class FailsOn(ByQuestion):
    """Answers like :class:`ByQuestion`, but a question starting with ``fail`` gets an HTTP 500 from its host."""

    fail: str = "Would a snail"

    def reply(self, system, user, index):
        if user.startswith(self.fail):
            from uncertainty_lab.llm import LLMError

            raise LLMError("the Ollama server at http://gpu-7:11434 answered HTTP 500 to POST /api/chat: boom")
        return super().reply(system, user, index)


class InProcess:
    """An executor that runs each task here, one after another, through the workers' own ``run_task``."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None

    def share(self, snapshot):
        return None if snapshot.path is None else str(snapshot.path)

    def run(self, tasks, shared):
        from uncertainty_lab.executors.task import run_task

        for task in tasks:
            yield run_task(task, shared)


def test_a_failing_unit_on_a_remote_executor_is_reported_and_the_others_are_kept(tmp_path):
    from uncertainty_lab.executors.remote import run_remote
    from uncertainty_lab.executors.task import UnitFailed
    from uncertainty_lab.orchestration.experiment import EXPERIMENT, OrchestrationConfig

    config = OrchestrationConfig.coerce({
        "data": _data(tmp_path), "llm": FailsOn(script=SCRIPT), "policies": ["none"], "judge": "exact",
        "metrics": METRICS, "n_samples": 2, "max_tokens": 8, "progress": False, "figure": False, "out_dir": str(tmp_path / "out"),
        "questions_per_unit": 1})
    context = EXPERIMENT.prepare(config)
    units = EXPERIMENT.units(config, context)
    done = []
    with pytest.raises(UnitFailed, match=r"unit '.*\[none\] 2-2' failed on .*gpu-7:11434 answered HTTP 500.*rerun"):
        run_remote(EXPERIMENT, config, context, units, InProcess(), None, lambda u, r, o: done.append(u.label))
    assert done == [units[0].label, units[2].label]  # the units before and after the failing one finished
    assert OrchestrationRun.load(units[0].path).complete and OrchestrationRun.load(units[2].path).complete
    assert not units[1].path.exists() or FORMAT.read(units[1].path).body == []


def test_a_server_that_dies_mid_unit_keeps_the_finished_questions_and_the_rerun_asks_only_the_rest(
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("UL_LLM_ATTEMPTS", "2")
    with FakeOllama(models=[MODEL], reply="Yes.", die_after=2) as server:  # one question's two samples, then gone
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        config = tmp_path / "run.toml"
        config.write_text(f'llm = "ollama:{MODEL}"\npolicies = ["none"]\njudge = "exact"\nn_samples = 2\n'
                          'metrics = {entropy = "discrete_semantic_entropy"}\n'
                          f'max_tokens = 8\nfigure = false\nout_dir = "{tmp_path / "out"}"\nquestions_per_unit = 0\n'
                          f'data = {{loader = "strategyqa", path = "{SOURCE}", split = "train"}}\n')
        assert main(["orchestrate", "run", "--config", str(config), "--no-progress"]) == 1
        assert "failed after 2 attempts" in capsys.readouterr().err
        (path,) = (tmp_path / "out" / "runs").rglob("*.jsonl")
        journal = FORMAT.read(path)
        assert len(journal.body) == 1 and journal.end is None  # the finished question kept, the unit not finished
        server.die_after, asked = None, server.count("/api/chat")
        assert main(["orchestrate", "run", "--config", str(config), "--no-progress"]) == 0
        assert server.count("/api/chat") - asked == 4  # the two questions left, two samples each
    run = OrchestrationRun.load(path)
    assert run.complete and [r.trace.final.answer for r in run.records] == ["Yes"] * 3
