"""Example plugins for uncertainty-lab that are not built in.

=================  ====================  ==================================================================
kind               plugin                idea
=================  ====================  ==================================================================
memory_selectors   ``hawkes_semantic``   Algorithm 1's Hawkes excitation mixed with embedding similarity to
                                         the target node's instruction, weight λ
metrics            ``cluster_margin``    1 − (second-largest meaning class / largest): is there a clear
                                         winner among the sampled answers?
metrics            ``greedy_agreement``  share of sampled answers that mean the same as the greedy answer
stopping_gates     ``novelty_decay``     stop when the smoothed rate of new passages per round decays below a
                                         threshold
=================  ====================  ==================================================================

Install with ``pip install -e plugins/examples``; in a running kernel call
``uncertainty_lab.registry.refresh()``. The modules are imported only when a plugin is first used.
"""

__version__ = "0.1.0"
