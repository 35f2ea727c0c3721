"""ipywidgets panels. :func:`plugin_picker` builds a plugin chooser with controls generated from each
plugin's declared parameters, so a plugin written in a notebook cell gets sliders without UI code.
:func:`univariate_explorer` is notebook 01's self-excitation explorer (sliders for a one-node Hawkes process).
:func:`semantic_playground` is notebook 03's semantic-uncertainty playground (sample, cluster, score).
:func:`gate_explorer` is notebook 04's gate explorer (thresholds over a recorded run's round-1 signals);
:func:`audit_labeller` its grader audit (hand labels of a run's answers, agreement, corrected accuracy)."""

from .audit import AuditLabeller, audit_labeller
from .cascade import CascadeExplorer, cascade_explorer  # noqa: F401  (notebook 02)
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
from .search import EpisodeStepper, episode_stepper  # noqa: F401  (notebook 05)
from .semantic import PlaygroundResult, SemanticPlayground, run_playground, semantic_playground
from .worlds import KnownTruth, known_truth, known_truth_explorer  # noqa: F401  (notebooks 03 and 04, "Known truth")

__all__ = [
    "AuditLabeller",
    "GateExplorer",
    "PlaygroundResult",
    "PluginPicker",
    "SemanticPlayground",
    "UnivariateExplorer",
    "control_spec",
    "controls_for",
    "audit_labeller",
    "draw_univariate",
    "from_control_value",
    "gate_explorer",
    "make_control",
    "plugin_infos",
    "plugin_picker",
    "run_playground",
    "semantic_playground",
    "to_control_value",
    "univariate_explorer",
    "values_of",
]
