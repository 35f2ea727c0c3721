"""A copy-me plugin distribution for uncertainty-lab: one small, working plugin of each of the seven kinds.

Each module holds one plugin; ``pyproject.toml`` registers each under its entry-point group
``uncertainty_lab.<kind>``. A plugin is a class with a ``name``, a one-line ``summary``, an optional
``reference``, and its parameters as dataclass fields whose ``metadata`` carries ``min``, ``max``,
``step``, ``choices`` and ``help`` — the notebook pickers build their sliders from those.

=====================  ==========================  =================================================
kind                   plugin                      module
=====================  ==========================  =================================================
kernels                ``triangular``              :mod:`ul_plugin_template.kernels`
memory_selectors       ``latest_per_node``         :mod:`ul_plugin_template.selectors`
metrics                ``answer_length_spread``    :mod:`ul_plugin_template.metrics`
stopping_gates         ``max_steps_or_repeat``     :mod:`ul_plugin_template.gates`
llm_backends           ``echo``                    :mod:`ul_plugin_template.backends`
equivalence_judges     ``case_insensitive``        :mod:`ul_plugin_template.judges`
graders                ``first_words``             :mod:`ul_plugin_template.graders`
=====================  ==========================  =================================================

The modules are not imported here: the registry imports a plugin's module only when it is first used.
"""

__version__ = "0.1.0"
