"""A plugin picker: a dropdown of the installed plugins of one kind, and controls generated from the
selected plugin's declared parameters (``uncertainty_lab.parameters``), so a student's plugin gets
sliders without any UI code.

The decisions live in plain functions a test can call without a browser:

- :func:`control_spec` — which widget class (by name) and which keyword arguments a parameter gets;
- :func:`make_control` / :func:`controls_for` — the widgets themselves;
- :func:`to_control_value` / :func:`from_control_value` — between a parameter value and a widget value
  (they differ only where a widget cannot hold the value itself: ``None``, or choices that compare equal);
- :func:`values_of` — the parameter values a dict of controls currently holds.

:class:`PluginPicker` (from :func:`plugin_picker`) only wires these together.
"""

from __future__ import annotations

import dataclasses
import html
import math
import warnings
from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from .. import registry
from ..parameters import Parameter, ParameterError, parameters, validate

__all__ = [
    "PluginPicker",
    "control_spec",
    "controls_for",
    "from_control_value",
    "make_control",
    "plugin_infos",
    "plugin_picker",
    "to_control_value",
    "values_of",
]

#: the largest integer a browser holds exactly (JavaScript numbers are doubles)
INT_LIMIT = 2**53 - 1
FLOAT_LIMIT = 1.0e300
_STYLE = {"description_width": "initial"}
_LAYOUT = {"width": "420px"}


# --- parameter -> control ---------------------------------------------------------------------------

def _required(p: Parameter) -> bool:
    return p.default is dataclasses.MISSING


def _choices_of(p: Parameter) -> tuple | None:
    if p.choices is not None:
        return tuple(p.choices)
    if p.type is bool and p.default is None:
        return (None, True, False)
    return None


def _by_index(choices: tuple) -> bool:
    """Whether a Dropdown must hold choice *indices*: it treats ``None`` as "nothing selected" and
    cannot tell apart options that compare equal (``1`` and ``True``, ``1`` and ``1.0``)."""
    if any(c is None for c in choices):
        return True
    for i, a in enumerate(choices):
        for b in choices[i + 1:]:
            try:
                if a == b:
                    return True
            except Exception:
                return True
    return False


def _index_of(choices: tuple, value: Any) -> int:
    for i, c in enumerate(choices):  # exact type first, so True is not taken for 1
        if c is value or (type(c) is type(value) and c == value):
            return i
    for i, c in enumerate(choices):
        if c == value:
            return i
    raise ParameterError(f"{value!r} is not among the choices {list(choices)}")


def _as_text(p: Parameter) -> bool:
    """A Text box (empty = None) for an optional value no other widget can hold."""
    return p.default is None and p.type is not bool


def _decimals(*numbers: float | None) -> int:
    """Enough decimals to show each of ``numbers`` exactly (at most 6)."""
    best = 0
    for x in numbers:
        if x is None or not math.isfinite(x):
            continue
        for d in range(7):
            if abs(round(x, d) - x) <= 1e-9 * max(1.0, abs(x)):
                best = max(best, d)
                break
        else:
            best = 6
    return best


def _initial(p: Parameter) -> Any:
    """The value a control starts at: the default, or for a required parameter a neutral one."""
    if not _required(p):
        return p.default
    choices = _choices_of(p)
    if choices:
        return choices[0]
    if p.type is bool:
        return False
    if p.type in (int, float):
        low = p.min if p.min is not None else (0 if p.max is None or p.max >= 0 else p.max)
        return p.type(low)
    return ""


def control_spec(parameter: Parameter) -> tuple[str, dict[str, Any]]:
    """The ipywidgets class name and keyword arguments of the control for ``parameter``.

    bool -> Checkbox; choices -> Dropdown; int with min and max -> IntSlider (step default 1);
    float with min and max -> FloatSlider (step default (max - min) / 100); int/float with one bound ->
    BoundedIntText/BoundedFloatText; with none -> IntText/FloatText; str (and anything else) -> Text.
    A parameter whose default is ``None`` gets a Text box where empty means None (a bool one, a Dropdown
    of None/True/False). ``description`` is the parameter name, ``tooltip`` its help.
    """
    p = parameter
    help_text = p.help or ""
    if _required(p):
        help_text = (help_text + " " if help_text else "") + "(required)"
    common: dict[str, Any] = {
        "description": p.name,
        "tooltip": help_text or p.name,
        "style": dict(_STYLE),
        "layout": dict(_LAYOUT),
    }
    initial = _initial(p)
    choices = _choices_of(p)
    if choices is not None:
        if not choices:
            raise ParameterError(f"parameter {p.name!r} declares an empty list of choices")
        if _by_index(choices):
            options = [(_label(c), i) for i, c in enumerate(choices)]
        else:
            options = [(_label(c), c) for c in choices]
        return "Dropdown", {**common, "options": options, "value": to_control_value(p, initial)}
    if p.type is bool:
        return "Checkbox", {**common, "value": bool(initial), "indent": False}
    if _as_text(p):
        return "Text", {**common, "value": "", "placeholder": "empty = None"}
    if p.type is int:
        value = int(initial)
        if p.min is not None and p.max is not None:
            step = max(1, int(p.step)) if p.step else 1
            return "IntSlider", {**common, "min": int(math.ceil(p.min)), "max": int(math.floor(p.max)),
                                 "step": step, "value": value, "continuous_update": False}
        step = {"step": max(1, int(p.step))} if p.step else {}
        if p.min is not None or p.max is not None:
            low = int(math.ceil(p.min)) if p.min is not None else -INT_LIMIT
            high = int(math.floor(p.max)) if p.max is not None else INT_LIMIT
            return "BoundedIntText", {**common, "min": low, "max": high, "value": value, **step}
        return "IntText", {**common, "value": value, **step}
    if p.type is float:
        value = float(initial)
        if p.min is not None and p.max is not None:
            step = float(p.step) if p.step else (float(p.max) - float(p.min)) / 100.0
            fmt = f".{_decimals(step, float(p.min), float(p.max), value)}f"
            return "FloatSlider", {**common, "min": float(p.min), "max": float(p.max), "step": step,
                                   "value": value, "readout_format": fmt, "continuous_update": False}
        step = {"step": float(p.step)} if p.step else {}
        if p.min is not None or p.max is not None:
            low = float(p.min) if p.min is not None else -FLOAT_LIMIT
            high = float(p.max) if p.max is not None else FLOAT_LIMIT
            return "BoundedFloatText", {**common, "min": low, "max": high, "value": value, **step}
        return "FloatText", {**common, "value": value, **step}
    return "Text", {**common, "value": "" if initial is None else str(initial)}


def _label(choice: Any) -> str:
    return choice if isinstance(choice, str) else repr(choice)


def to_control_value(parameter: Parameter, value: Any) -> Any:
    """What the control of ``parameter`` must hold to mean ``value``."""
    p = parameter
    choices = _choices_of(p)
    if choices is not None:
        return _index_of(choices, value) if _by_index(choices) else choices[_index_of(choices, value)]
    if _as_text(p):
        return "" if value is None else str(value)
    if p.type not in (bool, int, float) and not isinstance(value, str):
        return "" if value is None else str(value)
    return value


def from_control_value(parameter: Parameter, raw: Any) -> Any:
    """The parameter value a control holding ``raw`` means (not yet validated)."""
    p = parameter
    choices = _choices_of(p)
    if choices is not None:
        if _by_index(choices):
            return choices[raw] if isinstance(raw, int) and 0 <= raw < len(choices) else raw
        return raw
    if _as_text(p):
        text = str(raw).strip()
        if text == "" or text == "None":
            return None
        if p.type in (int, float):
            try:
                return p.type(text)
            except ValueError:
                raise ParameterError(
                    f"parameter {p.name!r} must be {p.type.__name__} or empty (None), got {text!r}"
                ) from None
        return str(raw)
    if p.type is float and isinstance(raw, int) and not isinstance(raw, bool):
        return float(raw)
    return raw


def make_control(parameter: Parameter) -> widgets.ValueWidget:
    """The widget for ``parameter`` (see :func:`control_spec`); it remembers its parameter as
    ``control.parameter`` so :func:`values_of` can read it back."""
    cls_name, kwargs = control_spec(parameter)
    control = getattr(widgets, cls_name)(**kwargs)
    control.parameter = parameter
    return control


def controls_for(kind: str, name: str) -> dict[str, widgets.ValueWidget]:
    """One control per declared parameter of plugin ``name`` of ``kind``, in declaration order."""
    cls = registry.get(kind, name)
    return {p.name: make_control(p) for p in parameters(cls)}


def values_of(controls: dict[str, widgets.ValueWidget]) -> dict[str, Any]:
    """The parameter values the controls hold now (converted back from widget values, not validated)."""
    out = {}
    for key, control in controls.items():
        p = getattr(control, "parameter", None)
        out[key] = from_control_value(p, control.value) if p is not None else control.value
    return out


def plugin_infos(kind: str) -> tuple[list[registry.PluginInfo], list[registry.PluginInfo]]:
    """The plugins of ``kind`` split into (loadable, broken); registry warnings are not repeated here."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", registry.PluginWarning)
        infos = registry.describe(kind)
    return [i for i in infos if i.status == "ok"], [i for i in infos if i.status != "ok"]


# --- the widget -------------------------------------------------------------------------------------

def _info_html(info: registry.PluginInfo | None) -> str:
    if info is None:
        return "<i>no plugin selected</i>"
    parts = [f"<b>{html.escape(info.name)}</b>"]
    if info.summary:
        parts.append(f" — {html.escape(info.summary)}")
    extra = []
    if info.reference:
        extra.append(f"reference: {html.escape(info.reference)}")
    extra.append(f"from {html.escape(info.distribution)}")
    if not info.parameters:
        extra.append("no parameters")
    return "".join(parts) + f"<br><small style='color:#666'>{'; '.join(extra)}</small>"


def _broken_html(broken: list[registry.PluginInfo]) -> str:
    if not broken:
        return ""
    items = "".join(
        f"<li><code>{html.escape(b.name)}</code>: {html.escape(b.error)}</li>" for b in broken
    )
    return (f"<small style='color:#a33'>{len(broken)} plugin(s) could not be loaded and are not "
            f"selectable:<ul style='margin:0'>{items}</ul></small>")


class PluginPicker(widgets.VBox):
    """A dropdown of the loadable plugins of one kind and generated controls for the selected one's
    parameters. ``.name``, ``.params`` (validated), ``.create()``; ``observe_plugin(cb)`` and
    ``on_change(cb)`` call ``cb(picker)`` when the plugin, or (``on_change``) any parameter, changes."""

    def __init__(self, kind: str, *, value: str | None = None, **kwargs):
        registry.group(kind)  # a clear error for an unknown kind, before any widget exists
        super().__init__(**kwargs)
        self.kind = kind
        self.controls: dict[str, widgets.ValueWidget] = {}
        self._plugin_callbacks: list[Callable[[PluginPicker], Any]] = []
        self._change_callbacks: list[Callable[[PluginPicker], Any]] = []
        self._infos: dict[str, registry.PluginInfo] = {}
        self._loading = False
        self.dropdown = widgets.Dropdown(description=kind, style=dict(_STYLE), layout=dict(_LAYOUT))
        self.info = widgets.HTML()
        self.controls_box = widgets.VBox()
        self.status = widgets.HTML()
        self.broken = widgets.HTML()
        self.children = (self.dropdown, self.info, self.controls_box, self.status, self.broken)
        self._load_options(value)
        self.dropdown.observe(self._on_plugin, names="value")

    # -- building
    def _load_options(self, value: str | None) -> None:
        ok, broken = plugin_infos(self.kind)
        self._infos = {i.name: i for i in ok}
        if value is not None and value not in self._infos:
            registry.get(self.kind, value)  # raises UnknownPluginError / PluginLoadError, naming the fix
        self.broken.value = _broken_html(broken)
        names = list(self._infos)
        previous = self.dropdown.value
        current = value if value is not None else (previous if previous in names else None)
        if current is None and names:
            current = names[0]
        self._loading = True  # one rebuild, not one per trait change
        try:
            self.dropdown.options = names
            self.dropdown.value = current
        finally:
            self._loading = False
        self._build()
        if current != previous and previous is not None:
            self._notify(self._plugin_callbacks + self._change_callbacks)

    def _build(self) -> None:
        name = self.dropdown.value
        self.info.value = _info_html(self._infos.get(name)) if name else (
            f"<i>no loadable {html.escape(self.kind)} plugin is installed</i>")
        self.controls = controls_for(self.kind, name) if name else {}
        rows = []
        for control in self.controls.values():
            control.observe(self._on_param, names="value")
            help_text = control.parameter.help
            if help_text:
                note = widgets.HTML(f"<small style='color:#666'>{html.escape(help_text)}</small>")
                rows.append(widgets.HBox([control, note]))
            else:
                rows.append(control)
        self.controls_box.children = tuple(rows)
        self._update_status()

    def _update_status(self) -> None:
        if not self.name:
            self.status.value = ""
            return
        try:
            self.params  # noqa: B018 - validating is the point
            self.status.value = ""
        except ParameterError as exc:
            self.status.value = f"<small style='color:#a33'>{html.escape(str(exc))}</small>"

    def _notify(self, callbacks) -> None:
        for cb in callbacks:
            cb(self)

    def _on_plugin(self, change) -> None:
        if self._loading:
            return
        self._build()
        self._notify(self._plugin_callbacks + self._change_callbacks)

    def _on_param(self, change) -> None:
        self._update_status()
        self._notify(self._change_callbacks)

    # -- public API
    @property
    def name(self) -> str | None:
        """The selected plugin's name (None when no plugin of this kind can be loaded)."""
        return self.dropdown.value

    @name.setter
    def name(self, value: str) -> None:
        if value not in self._infos:
            registry.get(self.kind, value)  # raises the registry's error, listing what is available
        self.dropdown.value = value

    @property
    def plugin_info(self) -> registry.PluginInfo | None:
        return self._infos.get(self.name) if self.name else None

    @property
    def params(self) -> dict[str, Any]:
        """The current control values, validated against the plugin's declared parameters."""
        if not self.name:
            return {}
        cls = registry.get(self.kind, self.name)
        return validate(cls, values_of(self.controls), owner=f"{self.kind} plugin {self.name!r}")

    def set_params(self, **params: Any) -> None:
        """Set controls from parameter values (validated first)."""
        cls = registry.get(self.kind, self.name)
        owner = f"{self.kind} plugin {self.name!r}"
        checked = validate(cls, {**values_of(self.controls), **params}, owner=owner)
        for key in params:
            control = self.controls[key]
            control.value = to_control_value(control.parameter, checked[key])

    def create(self) -> Any:
        """An instance of the selected plugin with the current parameters: ``registry.create(...)``."""
        if not self.name:
            raise registry.UnknownPluginError(f"no loadable {self.kind} plugin is installed to create")
        return registry.create(self.kind, self.name, **self.params)

    def observe_plugin(self, callback: Callable[[PluginPicker], Any]) -> None:
        """Call ``callback(picker)`` whenever another plugin is selected."""
        self._plugin_callbacks.append(callback)

    def on_change(self, callback: Callable[[PluginPicker], Any]) -> None:
        """Call ``callback(picker)`` whenever the plugin or any of its parameters changes."""
        self._change_callbacks.append(callback)

    def refresh(self) -> None:
        """Re-scan installed plugins (after a ``pip install`` in this kernel) and rebuild."""
        registry.refresh()
        self._load_options(self.name if self.name in registry.names(self.kind) else None)

    def __repr__(self) -> str:
        return f"PluginPicker(kind={self.kind!r}, name={self.name!r})"


def plugin_picker(kind: str, *, value: str | None = None,
                  on_change: Callable[[PluginPicker], Any] | None = None) -> PluginPicker:
    """A :class:`PluginPicker` for the plugins of ``kind``, starting at ``value`` (default: the first)."""
    picker = PluginPicker(kind, value=value)
    if on_change is not None:
        picker.on_change(on_change)
    return picker
