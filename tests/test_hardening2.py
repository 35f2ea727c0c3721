"""Hardening, part 2: start-up checks that end in seconds naming the host (a silent, dripping, HTML, HTTP 500 or
wrong-JSON server; a dask scheduler that never speaks; an absurd OLLAMA_HOST), and the one-line messages for bad
settings and data files (each names the setting or file and the fix). Servers and files are made at test time."""

from __future__ import annotations

import pytest

from fake_ollama import Misbehaving
from uncertainty_lab.cli import main
from uncertainty_lab.cli.doctor import check_ollama
from uncertainty_lab.llm import LLMError, get_llm, ready_backend
from uncertainty_lab.llm import ollama_backend

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


def test_check_finds_a_missing_model_server_for_search(monkeypatch, tmp_path, capsys):
    config = tmp_path / "lab.toml"
    config.write_text('llm = "ollama:smollm2:135m"\n')
    monkeypatch.setenv("OLLAMA_HOST", "http://127.0.0.1:1")
    assert main(["search", "run", "--check", "--config", str(config), "--out-dir", str(tmp_path / "out")]) == 1
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
