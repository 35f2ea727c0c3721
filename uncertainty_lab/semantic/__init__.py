"""Semantic uncertainty: sampling, equivalence judges, metrics and their evaluation (HASSUM).

Sampling is apart from scoring: :func:`sample_answers` makes a :class:`SampleSet`; every metric's
``score(samples)`` returns a :class:`MetricResult` (uncertainty, confidence in [0, 1], normalised
uncertainty, details). Judges decide whether two answers mean the same; :func:`cluster` turns their
judgements into meaning classes. Metrics and judges are registry plugins (``metrics``,
``equivalence_judges``): ``registry.create("metrics", "semantic_entropy", judge="embedding")``.
"""

from . import judges
from .clustering import (
    Clustering,
    ClusteringComparison,
    cluster,
    compare_clusterings,
    greedy_clusters,
    similarity_matrix,
    transitive_clusters,
)
from .density import SemanticDensity, epanechnikov, nli_distance
from .entropy import (
    DiscreteSemanticEntropy,
    NumSemanticSets,
    PredictiveEntropy,
    SemanticEntropy,
    entropy_of_partition,
    max_entropy,
    partitions,
    partitions_above,
    reachable_entropies,
)
from .graph import Degree, Eccentricity, EigValLaplacian
from .judges import *  # noqa: F403  (its __all__ is added to ours below: the judge names are listed once)
from .lexical import LexicalSimilarity, rouge_l
from .metrics import Metric, MetricResult, score_all
from .samples import SampleSet, as_sample_set, sample_answers
from .text import normalise_answer
from .verbalized import VerbalizedConfidence, parse_confidence

__all__ = [
    "Clustering",
    "ClusteringComparison",
    "Degree",
    "DiscreteSemanticEntropy",
    "Eccentricity",
    "EigValLaplacian",
    "LexicalSimilarity",
    "Metric",
    "MetricResult",
    "NumSemanticSets",
    "PredictiveEntropy",
    "SampleSet",
    "SemanticDensity",
    "SemanticEntropy",
    "VerbalizedConfidence",
    "as_sample_set",
    "cluster",
    "compare_clusterings",
    "entropy_of_partition",
    "epanechnikov",
    "greedy_clusters",
    "max_entropy",
    "nli_distance",
    "normalise_answer",
    "parse_confidence",
    "partitions",
    "partitions_above",
    "reachable_entropies",
    "rouge_l",
    "sample_answers",
    "score_all",
    "similarity_matrix",
    "transitive_clusters",
]
__all__ += judges.__all__
