"""Hardening, part 2: start-up checks that end in seconds naming the host (a silent, dripping, HTML, HTTP 500 or
wrong-JSON server; a dask scheduler that never speaks; an absurd OLLAMA_HOST), and the one-line messages for bad
settings and data files (each names the setting or file and the fix). Servers and files are made at test time."""

from __future__ import annotations

import pytest
from fake_ollama import Misbehaving

from uncertainty_lab.cli import main
from uncertainty_lab.cli.doctor import check_ollama
from uncertainty_lab.llm import LLMError, get_llm, ollama_backend, ready_backend

MODEL = "smollm2:135m"


@pytest.fixture
def short_check(monkeypatch):
    """The start-up deadline shortened to 1 s, so a test shows which deadline a check used without waiting 5 s."""
    monkeypatch.setattr(ollama_backend, "CHECK_TIMEOUT", 1.0)


def _error_line(capsys) -> str:
    """The one line a failed command printed on stderr."""
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


# --- 1. short waits, clear ends --------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["silent", "drip"])
def test_ready_backend_gives_up_on_a_silent_or_dripping_server_at_the_check_deadline(mode, short_check, monkeypatch):
    with Misbehaving(mode, pace=0.1) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        with pytest.raises(LLMError) as info:
            ready_backend(f"ollama:{MODEL}")
        assert get_llm(f"ollama:{MODEL}").timeout == 120.0  # generation keeps its long timeout; the check does not
    message = str(info.value)
    assert server.url in message and "within 1.0 s" in message and "GET /api/tags" in message


@pytest.mark.parametrize("lab, setting", [("search", 'llm = "ollama:smollm2:135m"'),
                                          ("orchestrate", 'llm = "ollama:smollm2:135m"'),
                                          ("orchestrate", 'ollama_model = "smollm2:135m"')])
def test_check_finds_a_silent_model_server_for_every_lab(lab, setting, short_check, monkeypatch, tmp_path, capsys):
    config = tmp_path / "lab.toml"
    config.write_text(setting + "\n")
    with Misbehaving("silent") as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        code = main([lab, "run", "--check", "--config", str(config), "--out-dir", str(tmp_path / "out")])
    line = _error_line(capsys)
    assert code == 1 and line.startswith("error:")
    assert server.url in line and "within 1.0 s" in line and "OLLAMA_HOST" in line


@pytest.mark.parametrize("lab, setting", [("search", 'llm = "ollama:smollm2:135m"'),
                                          ("orchestrate", 'llm = "ollama:smollm2:135m"'),
                                          ("orchestrate", 'ollama_model = "smollm2:135m"')])
def test_check_finds_a_missing_model_server_for_search_and_orchestrate(lab, setting, monkeypatch, tmp_path, capsys):
    """Issue #24: ``--check`` says no server answers, with the command that starts one, as cascade's does (its
    ``--check`` fits the Hawkes model first, 6 s: checked by hand, the same line)."""
    config = tmp_path / "lab.toml"
    config.write_text(setting + "\n")
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    assert main([lab, "run", "--check", "--config", str(config), "--out-dir", str(tmp_path / "out")]) == 1
    line = _error_line(capsys)
    assert "no Ollama server answers at http://127.0.0.1:1" in line and "ollama serve" in line


def test_a_dask_scheduler_that_never_speaks_fails_in_seconds_naming_the_address(monkeypatch):
    from uncertainty_lab.executors import cluster

    monkeypatch.setattr(cluster, "PROBE_TIMEOUT", 0.5)
    with Misbehaving("silent") as server, pytest.raises(ValueError) as info:
        with cluster.DaskExecutor(scheduler=server.address):
            pass
    message = str(info.value)
    assert server.address in message and "sent nothing within 0.5 s" in message and "dask scheduler" in message


def test_an_absurd_ollama_host_is_one_line_naming_it(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("OLLAMA_HOST", "a" * 100_000)
    config = tmp_path / "lab.toml"
    config.write_text('llm = "ollama:smollm2:135m"\n')
    assert main(["search", "run", "--check", "--config", str(config), "--out-dir", str(tmp_path / "out")]) == 1
    line = _error_line(capsys)
    assert "OLLAMA_HOST" in line and "100000 characters" in line and "http://127.0.0.1:11434" in line
    assert len(line) < 400


@pytest.mark.parametrize("mode, shows", [
    ("html", ["HTTP 200", "text/html", "Welcome to nginx!"]),
    ("500", ["HTTP 500", "text/plain", "upstream exploded"]),
    ("garbage", ["GET /api/tags", "'models'", "not a list of model objects"]),
])
def test_doctor_says_what_a_server_that_is_not_ollama_answered(mode, shows, monkeypatch):
    with Misbehaving(mode) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        [check] = check_ollama(timeout=2.0)
    assert not check.ok and not check.required
    assert f"something answers at {server.url} but not as an Ollama server" in check.detail
    for text in shows:
        assert text in check.detail
    assert "<" not in check.detail and "has no attribute" not in check.detail and len(check.detail) < 300


# --- 2. one line naming the setting or file, and the fix --------------------------------------------------------


def _check_line(capsys, tmp_path, lab: str, toml: str) -> str:
    """``<lab> run --check`` on a config of ``toml``: it fails, and its one stderr line."""
    config = tmp_path / "lab.toml"
    config.write_text(toml)
    assert main([lab, "run", "--check", "--config", str(config), "--out-dir", str(tmp_path / "out")]) in (1, 2)
    return _error_line(capsys)


def test_a_data_path_that_is_not_a_string_is_named(tmp_path, capsys):
    line = _check_line(capsys, tmp_path, "orchestrate", 'data = {loader = "truthfulqa", path = 5}\n')
    assert "data.path must be a file or folder name" in line and "got int '5'" in line
    assert "expected str, bytes" not in line


def test_a_policy_whose_metrics_is_not_a_list_is_named(tmp_path, capsys):
    line = _check_line(capsys, tmp_path, "orchestrate", 'policies = [{name = "x", metrics = 5}]\n')
    assert "policy 'x': metrics must be a list of gates" in line and "got int '5'" in line
    assert "not iterable" not in line


def test_a_resume_refusal_shows_where_two_long_values_differ(tmp_path):
    from uncertainty_lab.journal import JournalFormat

    common = "You are a careful assistant who answers in one short sentence. " * 3
    fmt = JournalFormat("uncertainty_lab.test/1", body=("step",), what="test run")
    path = tmp_path / "run.jsonl"
    _, writer = fmt.open(path, {"prompt": common + "Be brief.", "temperature": 0.7})
    writer.close()
    changed = {"prompt": common + "Be thorough.", "temperature": 0.9, **{f"z{i}": i for i in range(8)}}
    with pytest.raises(ValueError) as info:
        fmt.open(path, changed)
    message = str(info.value)
    assert "Be brief." in message and "Be thorough." in message  # the differing part, not a cut shared start
    assert "temperature: file 0.7 vs now 0.9" in message
    assert "… and 4 more" in message  # 10 settings differ, 6 shown


def test_a_million_unknown_categories_make_a_short_line():
    from uncertainty_lab.datasets.qa import load_qa_questions

    with pytest.raises(ValueError) as info:
        load_qa_questions([f"c{i}" for i in range(1_000_000)])
    message = str(info.value)
    assert message.startswith("categories: unknown 'c0', ") and "… and 999995 more" in message
    assert len(message) < 600


def test_a_pipe_as_the_gdelt_path_or_in_its_folder_is_named(tmp_path):
    import os

    from uncertainty_lab.datasets.loaders import load

    pipe = tmp_path / "events.CSV"
    os.mkfifo(pipe)
    for path in (pipe, tmp_path):
        with pytest.raises(ValueError) as info:
            load("gdelt", str(path), format="events", domain_to_node={"example.com": "A"})
        message = str(info.value)
        assert f"{pipe}: is a named pipe (FIFO)" in message and "no such file" not in message
        assert "holds no" not in message


@pytest.mark.parametrize("name", ["notes.txt", "missing"])
def test_lab_refuses_a_path_that_is_neither_a_notebook_nor_a_folder(name, tmp_path, monkeypatch, capsys):
    import os

    calls = []
    monkeypatch.setattr(os, "execvp", lambda file, argv: calls.append(argv))
    path = tmp_path / name
    if name.endswith(".txt"):
        path.write_text("private notes\n")
    assert main(["lab", str(path)]) == 2
    line = _error_line(capsys)
    assert str(path) in line and "notebook" in line and calls == []


def test_a_truthfulqa_header_naming_a_column_twice_is_refused(tmp_path):
    from uncertainty_lab.datasets.truthfulqa import load_truthfulqa_csv

    path = tmp_path / "tq.csv"
    path.write_text("Type,Category,Question,Best Answer,Correct Answers,Incorrect Answers,Source,Question\n"
                    "A,B,What is it?,D,E,F,G,Another question?\n")
    with pytest.raises(ValueError, match=r"tq\.csv, line 1 \(header\): column 'Question' appears more than once"):
        load_truthfulqa_csv(path)


def _strategyqa_with_surrogate(tmp_path):
    import json

    records = [{"qid": f"q{i}", "term": "t", "description": "d", "question": f"Is {i} even?", "answer": i % 2 == 0,
                "facts": ["f"], "decomposition": ["d"]} for i in range(3)]
    records[1]["question"] = "Is \ud800 even?"
    path = tmp_path / "sq.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))  # json.dumps escapes it: \ud800
    return path


def test_check_loads_the_data_and_a_lone_surrogate_names_file_and_record(tmp_path, capsys):
    path = _strategyqa_with_surrogate(tmp_path)
    line = _check_line(capsys, tmp_path, "orchestrate",
                       f'llm = "embedded"\ndata = {{loader = "strategyqa", path = "{path}", split = "train"}}\n')
    assert f"{path}, line 2: a string holds a lone surrogate" in line
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").rglob("*.jsonl"))


def test_a_lone_surrogate_in_a_json_array_names_the_record(tmp_path):
    from uncertainty_lab.untrusted import UntrustedFileError, load_json

    with pytest.raises(UntrustedFileError, match=r"x\.json, record 3: a string holds a lone surrogate"):
        load_json('[{"q": "a"}, {"q": "b"}, {"q": "\\udc80"}]', "x.json")


GOOD = "from dataclasses import dataclass\n\n@dataclass\nclass M:\n    def score(self, answers):\n        return 1.0\n"


def test_a_plugin_raising_keyboard_interrupt_at_import_is_a_broken_plugin(plugin_path):
    from test_registry import make_distribution

    from uncertainty_lab import registry

    make_distribution(plugin_path, "ul-test-ctrlc", """
        [uncertainty_lab.metrics]
        grumpy = ul_test_ctrlc:M
        fine = ul_test_fine:M
    """, {"ul_test_ctrlc": "raise KeyboardInterrupt\n", "ul_test_fine": GOOD})
    registry.refresh()
    with pytest.raises(registry.PluginLoadError, match=r"'grumpy' failed to import.*KeyboardInterrupt.*no Ctrl-C"):
        registry.get("metrics", "grumpy")
    assert registry.create("metrics", "fine").score(["a"]) == 1.0


def test_a_real_ctrl_c_while_a_plugin_imports_still_interrupts(plugin_path):
    import signal

    from test_registry import make_distribution

    from uncertainty_lab import registry

    make_distribution(plugin_path, "ul-test-slow", """
        [uncertainty_lab.metrics]
        slow = ul_test_slow:M
    """, {"ul_test_slow": "import os, signal, time\nos.kill(os.getpid(), signal.SIGINT)\ntime.sleep(5)\n" + GOOD})
    registry.refresh()
    before = signal.getsignal(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        registry.get("metrics", "slow")
    assert signal.getsignal(signal.SIGINT) is before  # the watch is undone


def test_doctor_names_an_absurd_ollama_host_instead_of_crashing(monkeypatch):
    monkeypatch.setenv("OLLAMA_HOST", "a" * 100_000)
    [check] = check_ollama(timeout=1.0)
    assert not check.ok and not check.required
    assert "OLLAMA_HOST" in check.detail and "100000 characters" in check.detail and len(check.detail) < 300
    assert "http://127.0.0.1:11434" in check.fix
