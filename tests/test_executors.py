"""The executor seam (:mod:`uncertainty_lab.executors`) with local worker processes: the settings, the same records
and journals as a serial run, the completion cache owned by the main process, a worker that dies mid-run, a sweep
interrupted under processes and finished serially, and orchestration's chunks of questions."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes import EchoLLM, HashEmbedder, KillOnce, Refusing

from uncertainty_lab.cascade.experiment import run_experiment as run_cascade
from uncertainty_lab.executors.remote import stages, write_atomic
from uncertainty_lab.orchestration import OrchestrationResumeError
from uncertainty_lab.orchestration.experiment import run_experiment as run_orchestration
from uncertainty_lab.search.config import SearchConfig
from uncertainty_lab.search.experiment import run_experiment as run_search

SEARCH = {"llm": "oracle", "limit": 3, "beliefs": ["implicit", "predicate"], "gate_sets": [["fixed_budget"]],
          "max_steps": 3, "progress": False, "figure": False}
ORCH = {"ids": ["factual-001", "factual-002", "ambiguous-001"], "policies": ["none", "both"], "judge": "exact",
        "n_samples": 3, "max_tokens": 8, "max_rounds": 2, "questions_per_unit": 2, "progress": False, "figure": False,
        "metrics": {"entropy": "discrete_semantic_entropy", "density": "num_semantic_sets"}}
CASCADE = {"selectors": ["hawkes", "recency"], "ks": [3], "runs": 1, "steps": 2, "max_tokens": 12,
           "progress": False, "figure": False}
#: what differs between two runs of the same config whoever runs them: timings and cache counts
VOLATILE = {"wall_time_s", "judge_hits", "judge_misses", "cached_calls", "cached", "judge_cache",
            "generated_per_question", "wall_s_per_question"}


def journals(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*.jsonl"))}


def without(value, keys=VOLATILE):
    """A JSON value without the keys that legitimately differ between runs (timings, cache counts)."""
    if isinstance(value, dict):
        return {k: without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [without(v, keys) for v in value]
    return value


def stable_journals(folder: Path) -> dict[str, list]:
    return {name: [without(json.loads(line)) for line in data.splitlines()] for name, data in journals(folder).items()}


def result_dict(result) -> dict:
    d = json.loads(json.dumps(result.to_dict(), default=str))
    d["config"] = {k: v for k, v in d["config"].items() if k not in type(result.config).run_only}
    return without(json.loads(json.dumps(d).replace(str(result.config.out_dir), "OUT")))


# --- settings ---------------------------------------------------------------------------------------------


def test_executor_settings_are_checked_and_left_out_of_the_fingerprint(tmp_path):
    base = SearchConfig.from_mapping(SEARCH)
    for changes in ({"executor": "dask", "workers": 8}, {"executor": "processes"},
                    {"llm_hosts": ["http://a:11434"]}):
        assert SearchConfig.from_mapping({**SEARCH, **changes}).fingerprint() == base.fingerprint()
    with pytest.raises(ValueError, match="did you mean 'processes'"):
        run_search({**SEARCH, "executor": "process", "out_dir": str(tmp_path)})
    with pytest.raises(ValueError, match="workers must be a positive integer"):
        run_search({**SEARCH, "executor": "processes", "workers": 0, "out_dir": str(tmp_path)})
    with pytest.raises(ValueError, match="set executor = 'dask' too"):
        run_search({**SEARCH, "scheduler": "tcp://127.0.0.1:8786", "out_dir": str(tmp_path)})
    assert not list(tmp_path.iterdir())  # refused before anything ran


def test_a_remote_executor_refuses_objects_passed_in_and_unpicklable_configs(tmp_path):
    with pytest.raises(ValueError, match=r"cannot use the objects passed in \(llm=\)"):
        run_cascade({"steps": 2, "executor": "processes", "out_dir": str(tmp_path)}, llm=EchoLLM())
    unpicklable = EchoLLM()
    unpicklable.hook = lambda: None  # a lambda cannot be pickled
    with pytest.raises(ValueError, match="give llm as a spec string"):
        run_orchestration({**ORCH, "llm": unpicklable, "executor": "processes", "out_dir": str(tmp_path)})
    with pytest.raises(ValueError, match="share_cache = false"):
        run_orchestration({**ORCH, "llm": EchoLLM(), "share_cache": False, "executor": "processes",
                           "out_dir": str(tmp_path)})


def test_the_command_line_sets_the_executor(tmp_path, capsys):
    from uncertainty_lab.cli import main

    cfg = tmp_path / "search.toml"
    cfg.write_text(f'llm = "oracle"\nlimit = 1\nout_dir = "{tmp_path / "out"}"\n', encoding="utf-8")
    assert main(["search", "run", "--config", str(cfg), "--check", "--executor", "processes", "--workers", "3"]) == 0
    assert "executor: processes with 3 workers" in capsys.readouterr().out
    assert main(["search", "run", "--config", str(cfg), "--check", "--scheduler", "tcp://head:8786"]) == 0
    assert "executor: dask on tcp://head:8786" in capsys.readouterr().out  # a scheduler implies dask
    cfg.write_text(cfg.read_text() + 'executor = "cluster"\n', encoding="utf-8")
    assert main(["search", "run", "--config", str(cfg), "--check"]) == 1
    assert "executor must be one of 'serial', 'processes', 'dask'" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_stages_and_atomic_writes(tmp_path):
    from uncertainty_lab.lab import Unit

    units = [Unit(("a",), "a", spec={"stage": 1}), Unit(("b",), "b"), Unit(("c",), "c", spec={"stage": 1})]
    assert [[u.key for u in s] for s in stages(units)] == [[("b",)], [("a",), ("c",)]]
    target = tmp_path / "x" / "run.jsonl"
    write_atomic(target, b"one\n")
    write_atomic(target, b"two\n")
    assert target.read_bytes() == b"two\n" and [p.name for p in target.parent.iterdir()] == ["run.jsonl"]


# --- processes ------------------------------------------------------------------------------------------


def test_ctrl_c_under_processes_keeps_the_finished_units_and_a_serial_rerun_finishes(tmp_path, temp_dir):
    def stop_after_four(done, total, label, seconds):
        if done == 4:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_search({**SEARCH, "out_dir": str(tmp_path / "run"), "executor": "processes", "workers": 2},
                   log=stop_after_four)
    assert len(journals(tmp_path / "run")) == 4  # the finished units, each written whole; the rest stopped at once
    assert list(temp_dir.iterdir()) == []  # the stopped workers' temporary files too
    finished = run_search({**SEARCH, "out_dir": str(tmp_path / "run")})
    whole = run_search({**SEARCH, "out_dir": str(tmp_path / "whole")})
    assert journals(tmp_path / "run") == journals(tmp_path / "whole") and result_dict(finished) == result_dict(whole)
    assert finished.report().replace(str(tmp_path / "run"), "") == whole.report().replace(str(tmp_path / "whole"), "")


def test_processes_give_the_serial_cascade(tmp_path, monkeypatch):
    monkeypatch.setattr("uncertainty_lab.cascade.experiment._make_embedder", lambda spec: HashEmbedder())
    before = EchoLLM.generated
    pooled = run_cascade({**CASCADE, "llm": EchoLLM(), "executor": "processes", "workers": 2,
                          "out_dir": str(tmp_path / "pooled")})
    assert EchoLLM.generated == before  # every headline was written by a worker
    serial = run_cascade({**CASCADE, "llm": EchoLLM(), "out_dir": str(tmp_path / "serial")})
    assert journals(tmp_path / "pooled") == journals(tmp_path / "serial") and len(journals(tmp_path / "serial")) == 2
    assert pooled.table() == serial.table() and result_dict(pooled) == result_dict(serial)


def test_a_worker_that_dies_mid_run_loses_and_duplicates_nothing_and_the_cache_stays_here(tmp_path, temp_dir):
    config = {**ORCH, "questions_per_unit": 1}
    marker = tmp_path / "killed"
    pooled = run_orchestration({**config, "llm": KillOnce(marker=str(marker)), "executor": "processes", "workers": 2,
                                "out_dir": str(tmp_path / "pooled")})
    assert marker.is_file()  # a worker died on its first model call
    assert list(temp_dir.iterdir()) == []  # and left no temporary files
    # the workers' answers were cached by this process: a serial run of the same config asks the model nothing
    serial = run_orchestration({**config, "llm": Refusing(), "out_dir": str(tmp_path / "serial")})
    assert result_dict(pooled) == result_dict(serial)
    files = stable_journals(tmp_path / "pooled")
    assert files == stable_journals(tmp_path / "serial") and len(files) == 6  # 3 questions x 2 policies
    for lines in files.values():  # header, one question, end: nothing written twice
        assert [r["type"] for r in lines] == ["header", "question", "end"]


# --- orchestration's chunks -------------------------------------------------------------------------------


def test_chunking_changes_no_answer_and_an_old_layout_is_refused_with_the_way_out(tmp_path):
    one = run_orchestration({**ORCH, "llm": EchoLLM(), "questions_per_unit": 0, "out_dir": str(tmp_path / "one")})
    assert sorted(journals(tmp_path / "one")) == ["runs/echo_echo-1__both.jsonl", "runs/echo_echo-1__none.jsonl"]
    chunked = run_orchestration({**ORCH, "llm": EchoLLM(), "out_dir": str(tmp_path / "chunked")})
    assert sorted(journals(tmp_path / "chunked")) == [f"runs/echo_echo-1__{p}/{part}.jsonl" for p in ("both", "none")
                                                      for part in ("q0000-q0001", "q0002-q0002")]
    assert [r.index for r in chunked.runs[("echo:echo-1", "both")].records] == [0, 1, 2]
    assert result_dict(one) == result_dict(chunked) | {"runs": result_dict(one)["runs"]}
    with pytest.raises(OrchestrationResumeError, match="questions_per_unit = 0 to resume it"):
        run_orchestration({**ORCH, "llm": EchoLLM(), "out_dir": str(tmp_path / "one")})


def test_the_echo_backend_is_deterministic_and_refusing_shares_its_cache_keys():
    from uncertainty_lab.llm import identity

    echo = EchoLLM()
    first = echo.complete("Capital of Australia?", n=2, seed=3)
    assert [c.text for c in first] == [c.text for c in EchoLLM().complete("Capital of Australia?", n=2, seed=3)]
    assert identity(Refusing()) == identity(echo) == identity(KillOnce(marker="x"))
    assert [c.text for c in Refusing().complete("Capital of Australia?", n=2, seed=3)] == [c.text for c in first]
