"""The plugin distributions under ``plugins/``, installed for real: ``pip install -e --prefix`` into a
throwaway prefix that this interpreter counts as one of its own (``site.PREFIXES``), found in THIS process through
entry points after ``registry.refresh()``, used by name in the labs' own machinery, their own test suites run.

The in-process part is the point: an editable install adds a ``.pth`` file that Python reads only at start-up,
so without ``refresh()`` applying it (registry ``_apply_new_pth_files``) the new entry points would be listed
but fail to import — what a student would hit after ``%pip install -e`` in a running kernel.

Needs no network: ``--no-deps --no-build-isolation --no-index`` builds with the setuptools already installed
here. The shared environment is never touched, so no other test (nor a parallel test process) sees the two
distributions; this process forgets them at the end whatever happens (and the registry is re-scanned).
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from plugin_env import AT_START

from uncertainty_lab import registry

ROOT = Path(__file__).resolve().parents[1]
DISTRIBUTIONS = {  # distribution -> (folder, top-level package)
    "uncertainty-lab-examples": (ROOT / "plugins" / "examples", "ul_examples"),
    "uncertainty-lab-plugin-template": (ROOT / "plugins" / "template", "ul_plugin_template"),
}
PLUGINS = [  # (kind, name, distribution)
    ("memory_selectors", "hawkes_semantic", "uncertainty-lab-examples"),
    ("metrics", "cluster_margin", "uncertainty-lab-examples"),
    ("metrics", "greedy_agreement", "uncertainty-lab-examples"),
    ("stopping_gates", "novelty_decay", "uncertainty-lab-examples"),
    ("kernels", "triangular", "uncertainty-lab-plugin-template"),
    ("memory_selectors", "latest_per_node", "uncertainty-lab-plugin-template"),
    ("metrics", "answer_length_spread", "uncertainty-lab-plugin-template"),
    ("stopping_gates", "max_steps_or_repeat", "uncertainty-lab-plugin-template"),
    ("llm_backends", "echo", "uncertainty-lab-plugin-template"),
    ("equivalence_judges", "case_insensitive", "uncertainty-lab-plugin-template"),
    ("graders", "first_words", "uncertainty-lab-plugin-template"),
]


def _pip(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    return done


def _importable(package: str) -> bool:
    importlib.invalidate_caches()
    return importlib.util.find_spec(package) is not None


def _forget(packages) -> None:
    for mod in list(sys.modules):
        if any(mod == p or mod.startswith(p + ".") for p in packages) or mod.startswith(
                ("__editable___uncertainty_lab_examples", "__editable___uncertainty_lab_plugin_template")):
            del sys.modules[mod]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """Install both distributions (editable) under a temporary prefix that ``site`` lists as this interpreter's, as
    a ``pip install -e`` into the running environment would; forget them afterwards."""
    import site
    import sysconfig

    if importlib.util.find_spec("setuptools") is None:
        pytest.fail("setuptools is not installed here: `pip install setuptools` (the plugins build with it, offline)")
    packages = [pkg for _, pkg in DISTRIBUTIONS.values()]
    before = {pkg: _importable(pkg) for pkg in packages}
    prefix = tmp_path_factory.mktemp("prefix")
    saved_path, saved_meta_path, saved_prefixes = list(sys.path), list(sys.meta_path), list(site.PREFIXES)
    site.PREFIXES.append(str(prefix))
    try:
        _pip("install", "--prefix", str(prefix), "--no-deps", "--no-build-isolation", "--no-index", "--quiet",
             *[arg for folder, _ in DISTRIBUTIONS.values() for arg in ("-e", str(folder))])
        yield before, sysconfig.get_path("purelib", vars={"base": str(prefix), "platbase": str(prefix)})
    finally:  # the prefix is no site of ours before the re-scan, or the re-scan would put it back on sys.path
        site.PREFIXES[:] = saved_prefixes
        _forget(packages)
        sys.path[:], sys.meta_path[:] = saved_path, saved_meta_path
        registry.refresh()


def test_refresh_makes_a_pip_install_in_this_process_importable(installed):
    before, _ = installed
    for pkg, was_importable in before.items():
        if not was_importable:  # installed after start-up: its .pth file has not been read yet
            assert not _importable(pkg)
    registry.refresh()
    for pkg in before:
        assert _importable(pkg), f"{pkg} is still not importable after registry.refresh()"


@pytest.mark.parametrize(("kind", "name", "distribution"), PLUGINS)
def test_plugins_are_found_through_entry_points(installed, kind, name, distribution):
    registry.refresh()
    assert name in registry.names(kind)
    (info,) = [i for i in registry.describe(kind) if i.name == name]
    assert info.status == "ok", info.error
    assert info.distribution == distribution and info.summary and info.parameters
    cls = registry.get(kind, name)
    assert cls.name == name and cls.__module__.split(".")[0] == DISTRIBUTIONS[distribution][1]
    registry.create(kind, name)


def _audit_items():
    from uncertainty_lab.datasets.audit import load_grader_audit

    return load_grader_audit()


class _Embedder:  # a fixed table instead of the sentence model (no torch in this test)
    def encode(self, texts):
        return np.array([[1.0, 0.0] if "cat" in t else [0.0, 1.0] for t in texts])


def test_one_of_each_kind_runs_by_name_in_the_labs(installed, tmp_path):
    from uncertainty_lab.cascade import Event, NodeSpec, simulate_cascade
    from uncertainty_lab.hawkes import HawkesModel
    from uncertainty_lab.llm import get_llm
    from uncertainty_lab.search import SearchEnvironment, run_episode
    from uncertainty_lab.semantic import SampleSet, score_all

    registry.refresh()
    # kernels + memory_selectors + llm_backends: a short cascade, every piece named
    specs = [NodeSpec("cats", "write about cats"), NodeSpec("news", "write the news")]
    model = HawkesModel([0.3, 0.3], [[0.2, 0.3], [0.3, 0.2]], "triangular", width=2.0)
    assert model.branching_matrix() == pytest.approx(np.array([[0.2, 0.3], [0.3, 0.2]]))
    echo = get_llm("echo", transform="reverse_words")
    for selector in ("latest_per_node", registry.create("memory_selectors", "hawkes_semantic", lam=0.5)):
        if not isinstance(selector, str):
            selector.embedder = _Embedder()
        run = simulate_cascade(Event(0.0, 0, "a cat sat"), model, selector, echo, steps=4, k=2, seed=3,
                               node_specs=specs, progress=False)
        assert len(run.steps) == 4 and all(s.text for s in run.steps)
    # metrics + equivalence_judges: a named metric with a named judge
    samples = SampleSet.from_texts(["Paris", "PARIS", "paris", "Rome"], question="capital?", greedy="Paris")
    scores = score_all(samples, ["cluster_margin", "greedy_agreement", "answer_length_spread"], judge="case_insensitive")
    assert scores["cluster_margin"].confidence == pytest.approx(1 - 1 / 3)
    assert scores["greedy_agreement"].confidence == pytest.approx(0.75)
    assert scores["answer_length_spread"].confidence == 1.0
    # stopping_gates: both gates in a search episode (heuristic policy; the echo model gives the final answer)
    ep = run_episode("Which river flows through the capital of France?", SearchEnvironment(), llm=echo,
                     gates=["novelty_decay", ("max_steps_or_repeat", {"max_steps": 5})], max_steps=8)
    assert ep.stop_reason in ("exhausted", "budget") and len(ep.steps) <= 5
    assert {"novelty_decay", "max_steps_or_repeat"} <= set(ep.steps[-1].gates)
    assert not math.isnan(ep.steps[0].gates["novelty_decay"]["signals"]["smoothed_upr"])
    # graders: the template's grader by name in the grader audit and in the orchestration lab's grader
    from uncertainty_lab.orchestration import QAGrader
    from uncertainty_lab.semantic.grading_audit import audit_graders

    (row,) = audit_graders(["first_words"], [it for it in _audit_items() if it.style == "short"][:6])
    assert row.name == "first_words" and row.n == 6
    assert QAGrader({"name": "first_words", "n_words": 1})({"answers": ["Canberra"]}, "Canberra!")["label"] == "correct"


@pytest.mark.parametrize("distribution", DISTRIBUTIONS)
def test_each_distributions_own_tests_pass_against_the_installed_core(installed, distribution):
    folder, _ = DISTRIBUTIONS[distribution]
    _, site_dir = installed  # a fresh interpreter reads the prefix's .pth files as site does at start-up
    hidden = sorted(AT_START)  # and sees, as this process does, no plugin distribution of the user's own
    run = (f"import site, sys; site.addsitedir({site_dir!r}); sys.path.insert(0, {str(ROOT / 'tests')!r}); "
           f"import plugin_env; plugin_env.hide({hidden!r}); import pytest; "
           f"sys.exit(pytest.main([{str(folder / 'tests')!r}, '-q', '-p', 'no:cacheprovider']))")
    done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " passed" in done.stdout and "skipped" not in done.stdout  # the discovery tests ran: plugins installed


def test_a_renamed_copy_of_the_template_is_a_distribution_of_its_own(tmp_path):
    """The README's first steps: copy the folder, run its rename_plugin.py; every entry point then names a
    module of the new package (checked in a fresh interpreter, the copy on its path, nothing installed)."""
    import shutil
    import tomllib

    copy = tmp_path / "my_plugins"
    shutil.copytree(DISTRIBUTIONS["uncertainty-lab-plugin-template"][0], copy,
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info", ".ruff_cache", ".pytest_cache"))
    done = subprocess.run([sys.executable, str(copy / "rename_plugin.py"), "my_plugins"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert (copy / "ul_my_plugins").is_dir() and not (copy / "ul_plugin_template").exists()
    for path in [*copy.rglob("*.py"), copy / "pyproject.toml"]:
        if path.name != "rename_plugin.py":
            assert "plugin_template" not in path.read_text() and "plugin-template" not in path.read_text(), path
    project = tomllib.loads((copy / "pyproject.toml").read_text())
    assert project["project"]["name"] == "uncertainty-lab-my-plugins"
    assert project["tool"]["setuptools"]["packages"] == ["ul_my_plugins"]
    targets = [t for group in project["project"]["entry-points"].values() for t in group.values()]
    assert len(targets) == 7 and all(t.startswith("ul_my_plugins.") for t in targets)
    check = "; ".join(f"from {t.split(':')[0]} import {t.split(':')[1]}" for t in targets)
    done = subprocess.run([sys.executable, "-c", check], capture_output=True, text=True, timeout=120, cwd=copy)
    assert done.returncode == 0, done.stderr
    refused = subprocess.run([sys.executable, str(DISTRIBUTIONS["uncertainty-lab-plugin-template"][0] / "rename_plugin.py"),
                              "x"], capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "copy the folder first" in refused.stderr
