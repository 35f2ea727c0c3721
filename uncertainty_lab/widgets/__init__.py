"""ipywidgets panels. :func:`plugin_picker` builds a plugin chooser with controls generated from each
plugin's declared parameters, so a plugin written in a notebook cell gets sliders without UI code."""

from .picker import (
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
