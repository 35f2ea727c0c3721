"""CGDP — agentic search as a POMDP (Kausik, Swaminathan, Kallus 2026): a corpus environment and its tools, belief
states (implicit truncated history vs an orchestrator-managed predicate belief), stopping gates (``stopping_gates``
plugins, the paper's exhaustion gate among them) and the PBAI agent loop with JSONL episodes.

    from uncertainty_lab.llm import get_llm
    from uncertainty_lab.datasets.search import load_search_questions
    from uncertainty_lab.search import SearchEnvironment, run_episode

    env = SearchEnvironment()                                   # BM25 (bm25s) over the shipped corpus, k = 3
    q = load_search_questions()[0]
    ep = run_episode(q, env, llm=get_llm("embedded"), policy="llm", belief="predicate",
                     gates=["llm_self_stop", "exhaustion"], max_steps=8, seed=0, out="q001.jsonl")
    ep.stop_reason, ep.answer, ep.score()

The lab's files (``docs/ARCHITECTURE.md``): ``config`` (SearchConfig, Condition, the question selection),
``record`` (SearchStep, Episode, its run-file FORMAT), ``run`` (run_episode), ``experiment`` (SearchExperiment,
run_experiment), ``result`` (SearchResult), ``figures``. Its domain: ``environment`` (SearchEnvironment, Action,
Observation, objective), ``belief`` (ImplicitBelief, PredicateBelief), ``extraction`` (reading the extraction
output), ``gates`` (the stopping gates), ``policies`` (llm, heuristic), ``answer`` (the final-answer step),
``scoring`` (EpisodeScore), ``comparisons`` (paired tests, token savings), ``oracle`` (OracleReader),
``prompts`` (every prompt text), ``text`` (token proxy, Jaccard, entity rule).
"""

from .answer import ExtractedAnswer, extract_answer, final_answer
from .belief import BELIEFS, Finding, ImplicitBelief, Predicate, PredicateBelief, make_belief
from .config import Condition, SearchConfig, load_config
from .environment import Action, Observation, SearchEnvironment, SearchEnvironmentError, objective
from .experiment import EXPERIMENT, SearchExperiment, run_experiment
from .extraction import ParsedItem, parse_extraction
from .gates import (
    AnswerConvergenceGate,
    BeliefCompleteGate,
    ExhaustionGate,
    FixedBudgetGate,
    GateDecision,
    LLMSelfStopGate,
    StoppingGate,
    exhaustion_signals,
    make_gates,
)
from .oracle import OracleReader, OracleReaderError
from .policies import POLICIES, HeuristicPolicy, LLMPolicy, ParsedAction, PolicyContext, make_policy, parse_action
from .record import FORMAT, Episode, EpisodeError, EpisodeResumeError, SearchStep, step_seed
from .result import SearchExperimentResult, SearchResult
from .run import DEFAULT_GATES, run_episode
from .scoring import EpisodeScore, token_f1
from .text import action_tokens, count_tokens, entities, find_doc_ids, jaccard

__all__ = [
    "BELIEFS",
    "DEFAULT_GATES",
    "EXPERIMENT",
    "FORMAT",
    "POLICIES",
    "Action",
    "AnswerConvergenceGate",
    "BeliefCompleteGate",
    "Condition",
    "Episode",
    "EpisodeError",
    "EpisodeResumeError",
    "EpisodeScore",
    "ExhaustionGate",
    "ExtractedAnswer",
    "Finding",
    "FixedBudgetGate",
    "GateDecision",
    "HeuristicPolicy",
    "ImplicitBelief",
    "LLMPolicy",
    "LLMSelfStopGate",
    "Observation",
    "OracleReader",
    "OracleReaderError",
    "ParsedAction",
    "ParsedItem",
    "PolicyContext",
    "Predicate",
    "PredicateBelief",
    "SearchConfig",
    "SearchEnvironment",
    "SearchEnvironmentError",
    "SearchExperiment",
    "SearchExperimentResult",
    "SearchResult",
    "SearchStep",
    "StoppingGate",
    "action_tokens",
    "count_tokens",
    "entities",
    "exhaustion_signals",
    "extract_answer",
    "final_answer",
    "find_doc_ids",
    "jaccard",
    "load_config",
    "make_belief",
    "make_gates",
    "make_policy",
    "objective",
    "parse_action",
    "parse_extraction",
    "run_episode",
    "run_experiment",
    "step_seed",
    "token_f1",
]
