"""Once installed (``pip install -e .``), every plugin is found through its entry point, by name."""

from __future__ import annotations

import importlib.metadata

import pytest
from uncertainty_lab import registry
from uncertainty_lab.parameters import parameters

DISTRIBUTION = "uncertainty-lab-plugin-template"  # RENAME with the name in pyproject.toml
PLUGINS = {  # kind -> plugin name, as in pyproject.toml
    "kernels": "triangular",
    "memory_selectors": "latest_per_node",
    "metrics": "answer_length_spread",
    "stopping_gates": "max_steps_or_repeat",
    "llm_backends": "echo",
    "equivalence_judges": "case_insensitive",
    "graders": "first_words",
}

try:
    importlib.metadata.distribution(DISTRIBUTION)
except importlib.metadata.PackageNotFoundError:
    pytestmark = pytest.mark.skip(reason=f"{DISTRIBUTION} is not installed: run `pip install -e .` in its folder first")


@pytest.fixture(scope="module", autouse=True)
def _rescan():
    registry.refresh()


@pytest.mark.parametrize(("kind", "name"), PLUGINS.items())
def test_found_by_name_loaded_and_created(kind, name):
    assert name in registry.names(kind)
    (info,) = [i for i in registry.describe(kind) if i.name == name]
    assert info.status == "ok", info.error
    assert info.distribution == DISTRIBUTION
    cls = registry.get(kind, name)
    assert cls.name == name  # the entry-point name and the class's name agree
    plugin = registry.create(kind, name)
    assert all(callable(getattr(plugin, m)) for m in registry.PROTOCOLS[kind])


@pytest.mark.parametrize(("kind", "name"), PLUGINS.items())
def test_appears_in_the_notebook_picker_with_its_controls(kind, name):
    from uncertainty_lab.widgets import plugin_picker

    picker = plugin_picker(kind, value=name)
    assert picker.name == name
    assert set(picker.controls) == {p.name for p in parameters(registry.get(kind, name))}
    assert type(picker.create()) is registry.get(kind, name)
