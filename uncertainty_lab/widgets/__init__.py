"""ipywidgets panels. :func:`plugin_picker` builds a plugin chooser with controls generated from each
plugin's declared parameters, so a plugin written in a notebook cell gets sliders without UI code.
:func:`univariate_explorer` is notebook 01's self-excitation explorer (sliders for a one-node Hawkes process).
:func:`semantic_playground` is notebook 03's semantic-uncertainty playground (sample, cluster, score).
:func:`gate_explorer` is notebook 04's gate explorer (thresholds over a recorded run's round-1 signals)."""

from .hawkes import UnivariateExplorer, draw_univariate, univariate_explorer
from .orchestration import GateExplorer, gate_explorer
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
from .semantic import PlaygroundResult, SemanticPlayground, run_playground, semantic_playground

__all__ = [
    "UnivariateExplorer",
    "draw_univariate",
    "univariate_explorer",
    "PluginPicker",
    "control_spec",
    "controls_for",
    "from_control_value",
    "make_control",
    "plugin_infos",
    "plugin_picker",
    "to_control_value",
    "values_of",
    "PlaygroundResult",
    "SemanticPlayground",
    "run_playground",
    "semantic_playground",
    "GateExplorer",
    "gate_explorer",
]
