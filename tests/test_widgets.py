"""The plugin picker: controls generated from declared parameters, for every built-in backend and for a
plugin registered in-process. The UI-free functions are tested directly; the widget only wires them."""

from __future__ import annotations

import importlib.metadata
from dataclasses import dataclass, field

import ipywidgets as widgets
import pytest

from uncertainty_lab import registry
from uncertainty_lab.parameters import Parameter, ParameterError, parameters, validate
from uncertainty_lab.widgets import (
    PluginPicker,
    control_spec,
    controls_for,
    from_control_value,
    make_control,
    plugin_infos,
    plugin_picker,
    to_control_value,
    values_of,
)
from uncertainty_lab.widgets import picker as picker_module

# --- helpers -----------------------------------------------------------------------------------------


def values_to_try(p: Parameter) -> list:
    """Every value a test should push through a control: both ends and the midpoint of a range, each
    choice, both booleans, a few texts, None where it is allowed."""
    if p.choices is not None:
        return list(p.choices)
    if p.type is bool:
        return [True, False] + ([None] if p.default is None else [])
    out = []
    if p.type in (int, float):
        if p.min is not None and p.max is not None:
            mid = (p.min + p.max) / 2
            out += [p.type(p.min), p.type(p.max), int(mid) if p.type is int else float(mid)]
        else:
            base = p.default if isinstance(p.default, (int, float)) else 0
            out += [p.type(base), p.type(base + 3)]
            if p.min is not None:
                out.append(p.type(p.min))
            if p.max is not None:
                out.append(p.type(p.max))
    else:
        out += ["", "some text", "ollama:llama3.2:3b"]
    if not p.required and p.default is not None and p.default not in out:
        out.append(p.default)
    if p.default is None:
        out.append(None)
    return out


def push(control, value):
    """Set a control to mean ``value``; assert the widget kept it (no clamping, no coercion)."""
    raw = to_control_value(control.parameter, value)
    control.value = raw
    assert control.value == raw, f"{control.parameter.name}: control changed {raw!r} to {control.value!r}"
    back = from_control_value(control.parameter, control.value)
    assert back == value and type(back) is type(value), (control.parameter.name, value, back)


def ok_backends() -> list[str]:
    ok, _ = plugin_infos("llm_backends")
    return [i.name for i in ok]


# --- control_spec: one parameter -> one widget ---------------------------------------------------------


@pytest.mark.parametrize(
    "param, cls_name, expect",
    [
        (Parameter("flag", bool, True), "Checkbox", {"value": True}),
        (Parameter("k", int, 3, min=1, max=10), "IntSlider", {"min": 1, "max": 10, "step": 1, "value": 3}),
        (Parameter("k", int, 4, min=0, max=64, step=4), "IntSlider", {"step": 4}),
        (Parameter("x", float, 0.5, min=0.0, max=2.0), "FloatSlider",
         {"min": 0.0, "max": 2.0, "step": pytest.approx(0.02), "value": 0.5}),
        (Parameter("x", float, 0.5, min=0.0, max=1.0, step=0.05), "FloatSlider",
         {"step": 0.05, "readout_format": ".2f"}),
        (Parameter("k", int, 5, min=1), "BoundedIntText", {"min": 1, "value": 5}),
        (Parameter("k", int, 5, max=9), "BoundedIntText", {"max": 9, "value": 5}),
        (Parameter("x", float, 1.5, min=0.0), "BoundedFloatText", {"min": 0.0, "value": 1.5}),
        (Parameter("k", int, 7), "IntText", {"value": 7}),
        (Parameter("x", float, 7.5), "FloatText", {"value": 7.5}),
        (Parameter("mode", str, "b", choices=("a", "b", "c")), "Dropdown",
         {"options": [("a", "a"), ("b", "b"), ("c", "c")], "value": "b"}),
        (Parameter("s", str, "hello"), "Text", {"value": "hello"}),
        (Parameter("maybe", float, None, min=0.0, max=1.0), "Text", {"value": ""}),
    ],
)
def test_control_spec_chooses_widget(param, cls_name, expect):
    name, kwargs = control_spec(param)
    assert name == cls_name
    for key, value in expect.items():
        assert kwargs[key] == value, key
    assert kwargs["description"] == param.name
    control = make_control(param)
    assert type(control).__name__ == cls_name
    assert control.parameter is param


def test_control_spec_shows_help_as_tooltip_and_marks_required():
    _, kwargs = control_spec(Parameter("x", float, 0.1, min=0, max=1, help="how far"))
    assert kwargs["tooltip"] == "how far"
    _, kwargs = control_spec(Parameter("k", int, __import__("dataclasses").MISSING, min=2, max=5))
    assert "(required)" in kwargs["tooltip"] and kwargs["value"] == 2


def test_choices_that_a_dropdown_cannot_hold_by_value_round_trip():
    # None means "nothing selected" to a Dropdown, and 1 == True == 1.0: such choices go by index
    p = Parameter("odd", object, None, choices=(None, 1, True, 1.0, "x"))
    control = make_control(p)
    assert control.options and len(control.options) == 5
    for choice in p.choices:
        push(control, choice)
    with pytest.raises(ParameterError):
        to_control_value(p, "not a choice")


def test_optional_number_is_a_text_box_where_empty_means_none():
    p = Parameter("limit", int, None, min=0, max=10)
    control = make_control(p)
    for value in (None, 0, 10, 5):
        push(control, value)
    control.value = "abc"
    with pytest.raises(ParameterError, match="limit"):
        from_control_value(p, control.value)


# --- every built-in backend, every parameter over its range --------------------------------------------


def test_builtin_backends_are_listed():
    assert {"embedded", "ollama", "replay"} <= set(ok_backends())


@pytest.mark.parametrize("name", ["embedded", "ollama", "replay"])
def test_every_builtin_backend_parameter_round_trips(name):
    cls = registry.get("llm_backends", name)
    declared = parameters(cls)
    controls = controls_for("llm_backends", name)
    assert list(controls) == [p.name for p in declared]
    assert "cache" not in controls  # hidden field of every backend
    # the defaults validate as they stand
    assert validate(cls, values_of(controls)) == values_of(controls)
    for p in declared:
        control = controls[p.name]
        cls_name, kwargs = control_spec(p)
        assert type(control).__name__ == cls_name
        if cls_name.endswith("Slider"):
            assert (control.min, control.max) == (p.min, p.max)
        for value in values_to_try(p):
            push(control, value)
            current = values_of(controls)
            assert current[p.name] == value
            checked = validate(cls, current, owner=f"llm_backends plugin {name!r}")
            assert checked[p.name] == value
            if name == "replay":  # cheap to build: nothing runs until it is asked a question
                instance = registry.create("llm_backends", name, **current)
                assert getattr(instance, p.name) == value
        if p.default is not None and not p.required:
            push(control, p.default)


def test_picker_creates_replay_backend_with_the_chosen_parameters():
    picker = plugin_picker("llm_backends", value="replay")
    assert isinstance(picker, widgets.VBox) and isinstance(picker, PluginPicker)
    assert picker.name == "replay"
    picker.controls["backend"].value = "ollama"
    picker.controls["model"].value = "llama3.2:3b"
    assert picker.params == {"backend": "ollama", "model": "llama3.2:3b"}
    llm = picker.create()
    assert type(llm).__name__ == "ReplayLLM"
    assert (llm.backend, llm.model) == ("ollama", "llama3.2:3b")
    picker.set_params(model="other")
    assert picker.controls["model"].value == "other"


def test_picker_switching_plugin_rebuilds_controls_and_calls_back():
    picker = plugin_picker("llm_backends", value="embedded")
    assert set(picker.controls) == {"gguf", "n_ctx", "n_threads", "top_logprobs", "reuse_prompt"}
    n_ctx = picker.controls["n_ctx"]
    assert isinstance(n_ctx, widgets.IntSlider) and (n_ctx.min, n_ctx.max, n_ctx.step) == (256, 32768, 256)
    plugin_changes, any_changes = [], []
    picker.observe_plugin(lambda p: plugin_changes.append(p.name))
    picker.on_change(lambda p: any_changes.append(p.name))
    picker.dropdown.value = "ollama"
    assert plugin_changes == ["ollama"]
    assert set(picker.controls) == {"model", "host", "timeout", "top_logprobs"}
    timeout = picker.controls["timeout"]
    assert isinstance(timeout, widgets.FloatSlider) and (timeout.min, timeout.max) == (0.1, 3600.0)
    timeout.value = 30.0
    assert picker.params["timeout"] == 30.0
    assert any_changes == ["ollama", "ollama"]
    assert plugin_changes == ["ollama"]  # a parameter change is not a plugin change
    picker.name = "replay"
    assert picker.dropdown.value == "replay" and plugin_changes[-1] == "replay"
    # the controls are on the page
    shown = [w for row in picker.controls_box.children for w in getattr(row, "children", (row,))]
    assert all(c in shown for c in picker.controls.values())


def test_picker_rejects_unknown_kind_and_name():
    with pytest.raises(registry.UnknownKindError):
        plugin_picker("llm_backend")
    with pytest.raises(registry.UnknownPluginError, match="embedded"):
        plugin_picker("llm_backends", value="embeded")
    picker = plugin_picker("llm_backends")
    with pytest.raises(registry.UnknownPluginError):
        picker.name = "nope"


def test_picker_with_no_loadable_plugin_says_so(monkeypatch):
    monkeypatch.setattr(picker_module, "plugin_infos", lambda kind: ([], []))
    picker = plugin_picker("kernels")
    assert picker.name is None and picker.params == {} and picker.controls == {}
    assert "no loadable kernels plugin" in picker.info.value
    with pytest.raises(registry.UnknownPluginError):
        picker.create()


# --- a plugin registered in a notebook cell ----------------------------------------------------------


@dataclass
class DemoMetric:
    """A demo metric for the picker test."""

    name = "demo_metric"
    summary = "a demo metric with every kind of parameter"
    reference = "nobody (2024)"

    threshold: float = field(default=0.3, metadata={"min": 0.0, "max": 0.9, "step": 0.05, "help": "cut-off"})
    samples: int = field(default=10, metadata={"min": 1, "help": "how many"})
    window: int = field(default=3, metadata={"min": 1, "max": 9})
    normalise: bool = field(default=True, metadata={"help": "divide by log n"})
    mode: str = field(default="mean", metadata={"choices": ("mean", "max", "min"), "help": "aggregate"})
    label: str = "demo"
    limit: int | None = field(default=None, metadata={"min": 0, "max": 100, "help": "empty = no limit"})
    secret: int = field(default=42, metadata={"hidden": True})

    def score(self, answers):
        return len(answers) * self.threshold


@pytest.fixture
def demo_metric():
    registry.register("metrics", "demo_metric")(DemoMetric)
    yield DemoMetric
    registry.unregister("metrics", "demo_metric")


def test_registered_plugin_gets_sliders(demo_metric):
    picker = plugin_picker("metrics", value="demo_metric")
    assert "demo_metric" in picker.dropdown.options
    assert "a demo metric with every kind of parameter" in picker.info.value
    assert "nobody (2024)" in picker.info.value
    c = picker.controls
    # declaration order, and no hidden field
    assert list(c) == ["threshold", "samples", "window", "normalise", "mode", "label", "limit"]
    assert isinstance(c["threshold"], widgets.FloatSlider)
    assert (c["threshold"].min, c["threshold"].max, c["threshold"].step) == (0.0, 0.9, 0.05)
    assert c["threshold"].value == 0.3 and c["threshold"].tooltip == "cut-off"
    assert isinstance(c["samples"], widgets.BoundedIntText) and c["samples"].min == 1
    assert isinstance(c["window"], widgets.IntSlider) and (c["window"].min, c["window"].max) == (1, 9)
    assert isinstance(c["normalise"], widgets.Checkbox) and c["normalise"].value is True
    assert isinstance(c["mode"], widgets.Dropdown) and list(c["mode"].options) == [
        ("mean", "mean"), ("max", "max"), ("min", "min")]
    assert isinstance(c["label"], widgets.Text)
    assert picker.params == {"threshold": 0.3, "samples": 10, "window": 3, "normalise": True,
                             "mode": "mean", "label": "demo", "limit": None}
    # every parameter over its range, through the picker and create()
    for p in parameters(demo_metric):
        for value in values_to_try(p):
            push(c[p.name], value)
            assert picker.params[p.name] == value
            assert getattr(picker.create(), p.name) == value
    made = picker.create()
    assert isinstance(made, DemoMetric) and made.secret == 42


def test_invalid_control_value_is_reported_not_swallowed(demo_metric):
    picker = plugin_picker("metrics", value="demo_metric")
    limit = picker.controls["limit"]
    assert isinstance(limit, widgets.Text) and picker.status.value == ""
    limit.value = "500"  # out of bounds: validate() says so
    assert "limit" in picker.status.value and "&lt;= 100" in picker.status.value
    with pytest.raises(ParameterError, match="<= 100"):
        picker.params  # noqa: B018
    limit.value = "abc"  # not a number
    assert "limit" in picker.status.value
    with pytest.raises(ParameterError, match="int or empty"):
        picker.create()
    limit.value = "7"
    assert picker.status.value == "" and picker.params["limit"] == 7
    with pytest.raises(ParameterError, match="<= 0.9"):
        picker.set_params(threshold=5.0)
    assert picker.controls["threshold"].value == 0.3


def test_unregistered_plugin_disappears_after_refresh(demo_metric):
    picker = plugin_picker("metrics", value="demo_metric")
    registry.unregister("metrics", "demo_metric")
    picker.refresh()
    assert "demo_metric" not in picker.dropdown.options
    registry.register("metrics", "demo_metric")(DemoMetric)  # the fixture unregisters it again


def test_broken_plugin_is_listed_with_its_error_not_selectable(monkeypatch, demo_metric):
    ep = importlib.metadata.EntryPoint(name="broken_metric", value="no_such_module_xyz:Thing",
                                       group="uncertainty_lab.metrics")
    entry = registry._Entry("metrics", "broken_metric", "broken-dist", ep.value, entry_point=ep)
    monkeypatch.setitem(registry._registered["metrics"], "broken_metric", entry)
    picker = plugin_picker("metrics")
    assert "broken_metric" not in picker.dropdown.options
    assert "demo_metric" in picker.dropdown.options
    assert "broken_metric" in picker.broken.value and "no_such_module_xyz" in picker.broken.value
    assert "broken-dist" in picker.broken.value
    with pytest.raises(registry.PluginLoadError):
        plugin_picker("metrics", value="broken_metric")
