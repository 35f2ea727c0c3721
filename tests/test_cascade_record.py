"""The cascade run record and its file: a file written before the restructuring still loads, rebuilds its prompts
and resumes; loading a file never imports or calls code the file names (a malicious ``prompt_fn``)."""

from __future__ import annotations

import json
import os
import sys

import pytest
from fakes import FakeLLM
from test_cascade_run import MODEL, SEED, SPECS

from uncertainty_lab.cascade import CascadeError, CascadeRun, build_prompt, simulate_cascade
from uncertainty_lab.cascade.headlines import clean_headline
from uncertainty_lab.cascade.prompt import PROMPTS, headline_prompt
from uncertainty_lab.cascade.record import FORMAT, known_template, load
from uncertainty_lab.journal import JournalFormat

#: a run file as uncertainty_lab 0.1 wrote it (simulate_cascade with the test's FakeLLM, MODEL, SPECS and SEED,
#: steps=2, k=2, seed=7, prompt_fn=headline_prompt, postprocess=clean_headline, both then in cascade.experiment)
OLD_CONFIG = {
    "seed_event": {"time": 0.0, "node": 2, "text": "Lunar flyby crew completes final rehearsal before launch"},
    "node_specs": [{"name": "local_tv", "instruction": "Write one short local TV news headline."},
                   {"name": "business_finance",
                    "instruction": "Write one business news headline about costs or contracts."},
                   {"name": "specialist_science_tech", "instruction": "Write one technical science headline."}],
    "model": {"mu": [0.05, 0.04, 0.03], "alpha": [[0.2, 0.1, 0.0], [0.0, 0.15, 0.1], [0.3, 0.2, 0.25]],
              "kernel": {"name": "exponential", "params": {"beta": 0.5}}},
    "selector": {"name": "hawkes", "params": {"ranking": "recency", "eps_raw": 1e-06, "eps_norm": 0.05}},
    "llm": {"backend": "fake", "model": "echo-1"}, "k": 2, "seed": 7,
    "prompt_fn": "uncertainty_lab.cascade.experiment.headline_prompt", "temperature": 0.35, "top_p": 0.9,
    "max_tokens": 75, "samples_per_step": 0, "sample_temperature": None, "metric": None, "horizon": None,
    "postprocess": "uncertainty_lab.cascade.experiment.clean_headline",
}
OLD_RECORDS = [
    {"type": "header", "format": "uncertainty_lab.cascade/1", "config": OLD_CONFIG, "steps": 2},
    {"type": "step", "step": 1, "time": 2.462390190661534, "node": 0, "text": "item 797e2f v1",
     "memory": [{"index": 0, "node": 2, "weight": 1.0}], "prompt_hash": "797e2fe36ee4d5ef", "llm_seed": 1734722684,
     "finish_reason": "stop"},
    {"type": "step", "step": 2, "time": 2.889582320711419, "node": 1, "text": "item 8ec79a v1",
     "memory": [{"index": 1, "node": 0, "weight": 0.631358196228839}, {"index": 0, "node": 2,
                                                                        "weight": 0.36864180377116085}],
     "prompt_hash": "8ec79a68c2d5e250", "llm_seed": 957986155, "finish_reason": "stop"},
    {"type": "end", "reason": "steps", "n_steps": 2},
]


def _write(path, records):
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def _run(**kw):
    args = dict(seed_event=SEED, hawkes_model=MODEL, selector="hawkes", llm=FakeLLM(), steps=2, k=2, seed=7,
                node_specs=SPECS, prompt_fn=headline_prompt, postprocess=clean_headline, progress=False)
    return simulate_cascade(**(args | kw))


def test_the_format_is_the_shared_journal_grammar():
    assert isinstance(FORMAT, JournalFormat) and FORMAT.name == "uncertainty_lab.cascade/1"
    assert FORMAT.body == ("step",) and FORMAT.end == "end" and issubclass(FORMAT.error, CascadeError)


def test_a_file_written_by_the_old_code_loads_and_rebuilds_its_prompts(tmp_path):
    path = _write(tmp_path / "old.jsonl", OLD_RECORDS)
    run = load(path)
    assert run == CascadeRun.load(path)
    assert len(run) == 2 and run.stop_reason == "steps" and run.config == OLD_CONFIG and run.seed_event == SEED
    assert [s.llm_seed for s in run.steps] == [1734722684, 957986155]  # the seeds the new code derives too
    assert run.template() is headline_prompt  # the old module path names the moved template
    assert run.prompt(1) and run.prompt(2)  # rebuilt, and equal to the stored hashes
    # the same run made now: the same draws, memories, prompts, seeds and texts
    assert [s.to_record() for s in _run().steps] == [s.to_record() for s in run.steps]


def test_a_file_written_by_the_old_code_resumes(tmp_path):
    path = _write(tmp_path / "old.jsonl", OLD_RECORDS)
    llm = FakeLLM()
    extended = _run(llm=llm, steps=4, out=path)
    assert len(llm.calls) == 2  # only steps 3 and 4 were generated
    assert extended.config == OLD_CONFIG  # continued under the names its header records
    assert [s.to_record() for s in extended.steps] == [s.to_record() for s in _run(steps=4).steps]
    assert len(CascadeRun.load(path)) == 4 and json.loads(path.read_text().splitlines()[0]) == OLD_RECORDS[0]
    fresh = _run(steps=1, out=tmp_path / "new.jsonl")
    assert fresh.config["prompt_fn"] == "uncertainty_lab.cascade.prompt.headline_prompt"


def test_known_templates_are_looked_up_never_imported():
    assert known_template("headline") is headline_prompt and known_template("default") is build_prompt
    for name, fn in PROMPTS.items():
        assert known_template(f"{fn.__module__}.{fn.__qualname__}") is fn, name
    assert known_template("uncertainty_lab.cascade.experiment.headline_prompt") is headline_prompt
    for name in ("os.system", "builtins.eval", "uncertainty_lab.cascade.prompt.prompt_hash", None, 3):
        assert known_template(name) is None


@pytest.mark.parametrize("name", ["os.system", "evil_cascade_module.template"])
def test_a_malicious_run_file_imports_and_calls_nothing(tmp_path, monkeypatch, name):
    """The file's prompt_fn names os.system or a module that would leave a marker when imported: loading the run
    and asking for a prompt neither imports it nor calls anything; the error says to pass prompt_fn=."""
    marker = tmp_path / "imported"
    (tmp_path / "evil_cascade_module.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef template(*a):\n    open({str(marker)!r}, 'w').close()\n",
        encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    called = []
    monkeypatch.setattr(os, "system", lambda *a, **kw: called.append(a))
    config = OLD_CONFIG | {"prompt_fn": name}
    path = _write(tmp_path / "evil.jsonl", [{**OLD_RECORDS[0], "config": config}, *OLD_RECORDS[1:]])
    run = CascadeRun.load(path)
    for step in (1, 2):
        with pytest.raises(CascadeError, match=f"template {name!r}.*pass that function as prompt_fn="):
            run.prompt(step)
        with pytest.raises(CascadeError, match="prompt_fn="):
            run.prompt(step, verify=False)
    assert called == [] and not marker.exists() and "evil_cascade_module" not in sys.modules
    # the caller may pass the template the run used (here the one that really made it)
    assert run.prompt(2, prompt_fn=headline_prompt)[0]["role"] == "system"


def test_a_template_the_package_does_not_know_is_passed_by_the_caller(tmp_path):
    def shouting(*args):
        return [{"role": "user", "content": build_prompt(*args)[1]["content"].upper()}]

    made = _run(prompt_fn=shouting, out=tmp_path / "own.jsonl")
    assert made.config["prompt_fn"].endswith("shouting")
    loaded = CascadeRun.load(tmp_path / "own.jsonl")
    with pytest.raises(CascadeError, match="pass that function as prompt_fn="):
        loaded.prompt(1)
    assert loaded.prompt(1, prompt_fn=shouting) == made.prompt(1, prompt_fn=shouting)


def test_a_file_without_a_recorded_template_used_the_default(tmp_path):
    run = _run(prompt_fn=build_prompt, postprocess=None, out=tmp_path / "d.jsonl")
    config = {k: v for k, v in run.config.items() if k != "prompt_fn"}
    path = _write(tmp_path / "bare.jsonl", [{"type": "header", "format": FORMAT.name, "config": config, "steps": 2},
                                            *[s.to_record() for s in run.steps]])
    loaded = CascadeRun.load(path)
    assert loaded.template() is build_prompt and loaded.prompt(2) == run.prompt(2) and loaded.stop_reason is None


def test_damaged_files_are_errors_naming_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="no cascade run file"):
        CascadeRun.load(tmp_path / "missing.jsonl")
    skipped = _write(tmp_path / "skip.jsonl", [OLD_RECORDS[0], OLD_RECORDS[2]])
    with pytest.raises(CascadeError, match="step 2 where step 1 was expected"):
        CascadeRun.load(skipped)
    foreign = _write(tmp_path / "foreign.jsonl", [{**OLD_RECORDS[0], "format": "uncertainty_lab.search/1"}])
    with pytest.raises(CascadeError, match="not a cascade run file"):
        CascadeRun.load(foreign)
    headless = _write(tmp_path / "headless.jsonl", OLD_RECORDS[1:])
    with pytest.raises(CascadeError, match="before the header"):
        CascadeRun.load(headless)
