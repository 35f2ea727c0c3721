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

Modules: ``environment`` (SearchEnvironment, Action, Observation, objective), ``belief`` (ImplicitBelief,
PredicateBelief and the extraction parser), ``gates`` (the stopping gates), ``policies`` (llm, heuristic),
``agent`` (run_episode), ``episode`` (SearchStep, Episode, scoring), ``answer`` (the final-answer step),
``prompts`` (every prompt text), ``text`` (token proxy, Jaccard, entity rule).
"""

from .agent import DEFAULT_GATES, run_episode
from .answer import ExtractedAnswer, extract_answer, final_answer
from .belief import (
    BELIEFS,
    Finding,
    ImplicitBelief,
    ParsedItem,
    Predicate,
    PredicateBelief,
    make_belief,
    parse_extraction,
)
from .environment import Action, Observation, SearchEnvironment, SearchEnvironmentError, objective
from .episode import Episode, EpisodeError, EpisodeResumeError, EpisodeScore, SearchStep, step_seed, token_f1
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
from .policies import POLICIES, HeuristicPolicy, LLMPolicy, ParsedAction, PolicyContext, make_policy, parse_action
from .text import action_tokens, count_tokens, entities, find_doc_ids, jaccard

__all__ = [
    "BELIEFS",
    "DEFAULT_GATES",
    "POLICIES",
    "Action",
    "AnswerConvergenceGate",
    "BeliefCompleteGate",
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
    "ParsedAction",
    "ParsedItem",
    "PolicyContext",
    "Predicate",
    "PredicateBelief",
    "SearchEnvironment",
    "SearchEnvironmentError",
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
    "make_belief",
    "make_gates",
    "make_policy",
    "objective",
    "parse_action",
    "parse_extraction",
    "run_episode",
    "step_seed",
    "token_f1",
]
