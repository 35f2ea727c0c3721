"""The registry, through real entry-point discovery: throwaway distributions on a temporary sys.path."""

from __future__ import annotations

import os
import sys
import textwrap
import warnings
from dataclasses import dataclass, field

import pytest

from uncertainty_lab import registry
from uncertainty_lab.parameters import ParameterError


def make_distribution(root, dist: str, entry_points: str, modules: dict[str, str] | None = None) -> None:
    """Write ``<dist>-0.1.dist-info`` (METADATA + entry_points.txt) and module files under ``root``."""
    info = root / f"{dist.replace('-', '_')}-0.1.dist-info"  # wheel naming: '-' separates name and version
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(textwrap.dedent(entry_points))
    for name, source in (modules or {}).items():
        (root / f"{name}.py").write_text(textwrap.dedent(source))


GOOD_METRIC = """
    from dataclasses import dataclass, field

    @dataclass
    class CountDistinct:
        '''Number of distinct answers.'''
        reference = "a test"
        lower: bool = field(default=True, metadata={"help": "lower-case first"})
        weight: float = field(default=1.0, metadata={"min": 0.0, "max": 2.0, "step": 0.1, "help": "scale"})
        mode: str = field(default="a", metadata={"choices": ("a", "b")})

        def score(self, answers):
            return len({a.lower() if self.lower else a for a in answers}) * self.weight
"""

NO_SCORE = """
    class NotAMetric:
        def compute(self, answers):
            return 0
"""


def test_builtin_backends_come_from_this_projects_entry_points():
    assert {"embedded", "ollama", "replay"} <= set(registry.names("llm_backends"))
    info = {i.name: i for i in registry.describe("llm_backends")}
    assert info["embedded"].distribution == "uncertainty-lab"
    assert info["embedded"].entry_point == "uncertainty_lab.llm.embedded:EmbeddedLLM"
    assert info["embedded"].status == "ok"
    n_ctx = {p.name: p for p in info["embedded"].parameters}["n_ctx"]
    assert (n_ctx.type, n_ctx.min, n_ctx.max, n_ctx.default) == (int, 256, 32768, 4096)


def test_kinds_and_groups():
    assert registry.KINDS == ("kernels", "memory_selectors", "metrics", "stopping_gates", "llm_backends",
                              "equivalence_judges", "graders")
    assert registry.group("metrics") == "uncertainty_lab.metrics"
    with pytest.raises(registry.UnknownKindError, match="closest match: 'metrics'"):
        registry.names("metric")


def test_discovers_loads_lazily_and_creates(plugin_path):
    make_distribution(plugin_path, "ul-test-good", """
        [uncertainty_lab.metrics]
        count_distinct = ul_test_good:CountDistinct
    """, {"ul_test_good": GOOD_METRIC})
    registry.refresh()
    assert "count_distinct" in registry.names("metrics")
    assert "ul_test_good" not in sys.modules  # listed, not imported
    metric = registry.create("metrics", "count_distinct", weight=2)
    assert "ul_test_good" in sys.modules
    assert metric.weight == 2.0 and isinstance(metric.weight, float)
    assert metric.score(["Paris", "paris", "Rome"]) == 4.0
    (info,) = [i for i in registry.describe("metrics") if i.name == "count_distinct"]
    assert (info.distribution, info.summary, info.reference) == ("ul-test-good", "Number of distinct answers.", "a test")
    params = {p.name: p for p in info.parameters}
    assert (params["weight"].min, params["weight"].max, params["weight"].step) == (0.0, 2.0, 0.1)
    assert params["mode"].choices == ("a", "b") and params["lower"].type is bool


def test_create_validates_parameters(plugin_path):
    make_distribution(plugin_path, "ul-test-good", """
        [uncertainty_lab.metrics]
        count_distinct = ul_test_good:CountDistinct
    """, {"ul_test_good": GOOD_METRIC})
    registry.refresh()
    with pytest.raises(ParameterError, match=r"'weight' must be <= 2.0, got 3.0"):
        registry.create("metrics", "count_distinct", weight=3.0)
    with pytest.raises(ParameterError, match=r"'weight' must be float, got str"):
        registry.create("metrics", "count_distinct", weight="heavy")
    with pytest.raises(ParameterError, match=r"'lower' must be bool"):
        registry.create("metrics", "count_distinct", lower=1)
    with pytest.raises(ParameterError, match=r"one of \['a', 'b'\]"):
        registry.create("metrics", "count_distinct", mode="c")
    with pytest.raises(ParameterError, match=r"no parameter 'wieght'.*did you mean 'weight'"):
        registry.create("metrics", "count_distinct", wieght=1.0)
    with pytest.raises(ParameterError, match="finite"):
        registry.create("metrics", "count_distinct", weight=float("nan"))


def test_unknown_name_lists_available_and_closest(plugin_path):
    make_distribution(plugin_path, "ul-test-good", """
        [uncertainty_lab.metrics]
        count_distinct = ul_test_good:CountDistinct
    """, {"ul_test_good": GOOD_METRIC})
    registry.refresh()
    with pytest.raises(LookupError) as err:
        registry.get("metrics", "count_distinc")
    assert isinstance(err.value, registry.UnknownPluginError)
    assert "available: count_distinct" in str(err.value)
    assert "closest match: 'count_distinct'" in str(err.value)


def test_broken_plugins_are_named_and_never_hide_healthy_ones(plugin_path):
    make_distribution(plugin_path, "ul-test-broken", """
        [uncertainty_lab.metrics]
        missing_module = ul_test_does_not_exist:Thing
        no_score = ul_test_broken:NotAMetric
        count_distinct = ul_test_good:CountDistinct
    """, {"ul_test_broken": NO_SCORE, "ul_test_good": GOOD_METRIC})
    registry.refresh()
    with pytest.raises(registry.PluginLoadError) as err:
        registry.get("metrics", "missing_module")
    e = err.value
    assert (e.distribution, e.entry_point, e.name) == ("ul-test-broken", "ul_test_does_not_exist:Thing", "missing_module")
    assert "ModuleNotFoundError" in str(e) and isinstance(e.__cause__, ModuleNotFoundError)
    with pytest.raises(registry.PluginLoadError, match="breaks the metrics protocol: missing score"):
        registry.get("metrics", "no_score")
    assert registry.create("metrics", "count_distinct").score(["a"]) == 1.0

    with pytest.warns(registry.PluginWarning) as caught:
        rows = {i.name: i for i in registry.describe("metrics")}
    assert len(caught) == 2
    assert rows["count_distinct"].status == "ok"
    assert rows["missing_module"].status == "error" and "ul-test-broken" in rows["missing_module"].error
    assert rows["no_score"].status == "error"
    with pytest.raises(registry.PluginLoadError):
        registry.describe("metrics", strict=True)


def test_refresh_finds_a_plugin_installed_after_the_first_scan(plugin_path):
    registry.names("metrics")  # the first scan happens here
    make_distribution(plugin_path, "ul-test-late", """
        [uncertainty_lab.metrics]
        late = ul_test_late:CountDistinct
    """, {"ul_test_late": GOOD_METRIC})
    assert "late" not in registry.names("metrics")  # the scan is cached
    registry.refresh()
    assert "late" in registry.names("metrics")
    assert registry.get("metrics", "late").__name__ == "CountDistinct"


def test_conflicting_names_warn_or_raise_when_strict(plugin_path):
    for dist in ("ul-test-a", "ul-test-b"):
        make_distribution(plugin_path / dist, dist, """
            [uncertainty_lab.metrics]
            same = ul_test_good:CountDistinct
        """)
        sys.path.insert(0, str(plugin_path / dist))
    (plugin_path / "ul_test_good.py").write_text(textwrap.dedent(GOOD_METRIC))
    try:
        with pytest.warns(registry.PluginWarning, match="registered by both"):
            registry.refresh()
        assert "same" in registry.names("metrics")
        with pytest.raises(registry.RegistryError, match="registered by both"):
            registry.refresh(strict=True)
    finally:
        for dist in ("ul-test-a", "ul-test-b"):
            sys.path.remove(str(plugin_path / dist))


def test_register_in_process_plugin_and_protocol_check():
    @registry.register("metrics", "notebook_metric")
    @dataclass
    class NotebookMetric:
        """A metric written in a notebook cell."""

        threshold: float = field(default=0.5, metadata={"min": 0.0, "max": 1.0})

        def score(self, answers):
            return self.threshold

    try:
        assert "notebook_metric" in registry.names("metrics")
        assert registry.create("metrics", "notebook_metric", threshold=0.25).score([]) == 0.25
        (info,) = [i for i in registry.describe("metrics") if i.name == "notebook_metric"]
        assert info.distribution == "<registered>" and info.summary == "A metric written in a notebook cell."
        registry.refresh()  # in-process registrations survive a re-scan
        assert "notebook_metric" in registry.names("metrics")
    finally:
        registry.unregister("metrics", "notebook_metric")
    assert "notebook_metric" not in registry.names("metrics")

    with pytest.raises(registry.PluginLoadError, match="missing score"):
        registry.register("metrics", "bad")(type("Bad", (), {}))
    with pytest.raises(registry.PluginLoadError, match="must be a class"):
        registry.register("metrics", "fn")(lambda answers: 0)


def test_required_parameters_are_reported():
    @registry.register("stopping_gates", "needs_budget")
    @dataclass
    class NeedsBudget:
        budget: int

        def reset(self):
            pass

        def update(self, step):
            return False

    try:
        with pytest.raises(ParameterError, match=r"needs parameter\(s\) \['budget'\]"):
            registry.create("stopping_gates", "needs_budget")
        assert registry.create("stopping_gates", "needs_budget", budget=3).budget == 3
    finally:
        registry.unregister("stopping_gates", "needs_budget")


def test_describe_warnings_do_not_leak_when_all_healthy():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert all(i.status == "ok" for i in registry.describe("llm_backends"))


HOOK = """
    import importlib.util
    import sys

    INSTALLS = 0


    class Finder:  # what setuptools' __editable___<dist>_finder does: map a module name to a source file
        def __init__(self, name, path):
            self.name, self.path = name, path

        def find_spec(self, fullname, path=None, target=None):
            if fullname == self.name:
                return importlib.util.spec_from_file_location(fullname, self.path)
            return None


    def install(name, path):
        global INSTALLS
        INSTALLS += 1
        sys.meta_path.append(Finder(name, path))
"""


def test_refresh_applies_pth_files_that_appeared_after_start_up(plugin_path, monkeypatch):
    """An editable install in a running kernel adds a .pth (a path line, or an import line that installs a
    finder) that Python read only at start-up: refresh() must apply the new ones, and only them."""
    site_dir, src, hooked = plugin_path / "site-packages", plugin_path / "src", plugin_path / "hooked"
    for d in (site_dir, src, hooked):
        d.mkdir()
    monkeypatch.setattr(registry.site, "getsitepackages", lambda: [str(site_dir)])
    monkeypatch.setattr(registry.site, "ENABLE_USER_SITE", False)
    monkeypatch.syspath_prepend(str(site_dir))  # site-packages is on sys.path; the source folders are not
    make_distribution(site_dir, "ul-test-pth", """
        [uncertainty_lab.metrics]
        by_path_line = ul_test_pth_src:CountDistinct
        by_import_hook = ul_test_pth_hooked:CountDistinct
    """, {"ul_test_pth_hook": HOOK})
    (src / "ul_test_pth_src.py").write_text(textwrap.dedent(GOOD_METRIC))
    (hooked / "ul_test_pth_hooked.py").write_text(textwrap.dedent(GOOD_METRIC))
    # a .pth start-up already ran: its module is imported; running the line again would count twice
    old = type(sys)("ul_test_pth_old")
    old.runs = 0
    monkeypatch.setitem(sys.modules, "ul_test_pth_old", old)
    (site_dir / "aaa_old.pth").write_text("import ul_test_pth_old; ul_test_pth_old.runs += 1\n")
    monkeypatch.delenv("UL_TEST_PTH_STDLIB", raising=False)
    (site_dir / "aab_shim.pth").write_text("import os; os.environ['UL_TEST_PTH_STDLIB'] = 'ran'\n")
    saved_meta_path = list(sys.meta_path)
    try:
        registry.refresh()
        assert {"by_path_line", "by_import_hook"} <= set(registry.names("metrics"))
        with pytest.raises(registry.PluginLoadError, match="ModuleNotFoundError"):  # listed, not importable
            registry.get("metrics", "by_path_line")

        # what `pip install -e` writes: a path line (with a comment, a blank and a missing dir) and a hook
        (site_dir / "__editable__.ul_test_pth_src-0.1.pth").write_text(f"# source\n\n{plugin_path / 'missing'}\n{src}\n")
        (site_dir / "__editable__.ul_test_pth_hooked-0.1.pth").write_text(
            f"import ul_test_pth_hook; ul_test_pth_hook.install('ul_test_pth_hooked', {str(hooked / 'ul_test_pth_hooked.py')!r})\n")
        registry.refresh()
        assert registry.create("metrics", "by_path_line").score(["a", "A", "b"]) == 2.0
        assert registry.create("metrics", "by_import_hook").score(["a", "b"]) == 2.0
        hook = sys.modules["ul_test_pth_hook"]
        assert hook.INSTALLS == 1 and sys.path.count(str(src)) == 1
        assert str(plugin_path / "missing") not in sys.path
        assert old.runs == 0 and "UL_TEST_PTH_STDLIB" not in os.environ  # start-up's lines are not re-run

        for pth in site_dir.glob("*.pth"):  # a rewritten file is read again, yet nothing runs twice
            os.utime(pth, ns=(pth.stat().st_atime_ns, pth.stat().st_mtime_ns + 10**9))
        registry.refresh()
        assert hook.INSTALLS == 1 and sys.path.count(str(src)) == 1 and old.runs == 0
    finally:
        sys.meta_path[:] = saved_meta_path
