"""Runs one search episode with the PBAI loop (Predicate-Based Adaptive Identification), streaming it to its run
file: evaluate stop → select action → observe → update belief.

    from uncertainty_lab.search import SearchEnvironment, run_episode
    ep = run_episode(question, SearchEnvironment(), llm=get_llm("embedded"), policy="llm", belief="predicate",
                     gates=["llm_self_stop", "exhaustion"], max_steps=8, seed=0, out="episode.jsonl")
    ep.score()

One iteration t = 1, 2, …, ``max_steps``:

1. **select action** — the policy proposes a_t from the belief (``llm``: the model; ``heuristic``: a fixed rule);
2. **observe** — o_t = F(a_t, c) from the environment; Cost(a_t) = tokens of o_t;
3. **update belief** — ``implicit``: append and truncate; ``predicate``: one extraction call, parsed strictly;
4. **evaluate stop** — every gate's ``update(step)``; the step (with all decisions) is written to the JSONL at
   once; the episode stops when any gate says stop (the first in list order names the stop), before the next
   iteration. Gates are evaluated after each step, never before the first one.

Stop reasons: the gate's ``stop_kind`` ("exhausted" for ``exhaustion``, "answered" for ``llm_self_stop``,
``belief_complete`` and ``answer_convergence``, "budget" for ``fixed_budget``, or a plugin's own), or "budget"
when ``max_steps`` run out. Without the ``llm_self_stop`` gate an ANSWER action is recorded (a proposal, Cost 0)
and the search goes on. **Every exit** goes through :func:`~uncertainty_lab.search.answer.final_answer`: the
model answers from the state, the answer is read and validated the same way, and an empty or abstaining answer
is recorded as a failure, never hidden; the final record also lists the questions still open.

Randomness: each model call's seed derives from (seed, t, purpose) (:func:`~uncertainty_lab.search.record.step_seed`),
so a resumed episode makes exactly the calls an uninterrupted one makes (and finds them in the cache).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..datasets.search import SearchQuestion
from ..journal import JournalWriter, refresh_header
from ..jsonsafe import jsonable
from ..llm.base import identity
from ..llm.select import as_backend
from ..parameters import settings
from ..provenance import StaleResultWarning
from .answer import final_answer
from .belief import make_belief
from .environment import SearchEnvironment
from .gates import make_gates
from .policies import PolicyContext, make_policy
from .record import FORMAT, Episode, EpisodeError, SearchStep, add_tokens, step_seed

__all__ = ["DEFAULT_GATES", "run_episode"]

DEFAULT_GATES = ("llm_self_stop", "exhaustion")


def _check_arguments(max_steps: Any, seed: Any, lam: Any, answer_max_tokens: Any) -> float:
    """Refuse a bad budget, seed, λ or answer length (EpisodeError naming it); return λ as a float."""
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise EpisodeError(f"max_steps must be a positive integer (the step budget), got {max_steps!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise EpisodeError(f"seed must be a non-negative integer, got {seed!r}")
    try:
        value = float(lam)
    except (TypeError, ValueError):
        raise EpisodeError(f"lam must be a number >= 0 (the price of one token), got {lam!r}") from None
    if not value >= 0:
        raise EpisodeError(f"lam must be a number >= 0 (the price of one token), got {lam!r}")
    if isinstance(answer_max_tokens, bool) or not isinstance(answer_max_tokens, int) or answer_max_tokens < 1:
        raise EpisodeError(f"answer_max_tokens must be a positive integer, got {answer_max_tokens!r}")
    return value


def question_record(question: SearchQuestion | str) -> dict[str, Any]:
    """What an episode's config records about its question (gold answer, aliases and supports when known;
    ``answerable: false`` only for an unanswerable one, so the records of answerable questions are unchanged)."""
    if isinstance(question, SearchQuestion):
        record = {"id": question.id, "question": question.question, "answer": question.answer,
                  "aliases": list(question.aliases), "supporting_ids": list(question.supporting_ids),
                  "decomposition": [s.question for s in question.decomposition]}
        return record if question.answerable else record | {"answerable": False}
    if isinstance(question, str) and question.strip():
        return {"id": "", "question": question.strip(), "answer": "", "aliases": [], "supporting_ids": [],
                "decomposition": []}
    raise EpisodeError(f"question must be a SearchQuestion (load_search_questions()) or a non-empty string, got {question!r}")


def _config_of(obj: Any) -> dict[str, Any]:
    """A policy's or a belief's ``config()`` as JSON values (``{"name", "params"}``)."""
    cfg = getattr(obj, "config", None)
    if callable(cfg):
        return jsonable(cfg())
    return {"name": getattr(obj, "name", type(obj).__name__), "params": {}}


def episode_config(qrec: dict[str, Any], env: SearchEnvironment, policy: Any, belief: Any, gates: Sequence[Any],
                   llm: Any, max_steps: int, seed: int, lam: float, answer_max_tokens: int) -> dict[str, Any]:
    """The header's ``config``: everything that decides the episode (a resumed one must match it)."""
    return jsonable({
        "question": qrec, "env": env.config(), "policy": _config_of(policy), "belief": _config_of(belief),
        "gates": [settings(g) for g in gates], "llm": identity(llm), "max_steps": max_steps,
        "seed": seed, "lam": lam, "answer_max_tokens": answer_max_tokens,
    })


def run_episode(
    question: SearchQuestion | str,
    env: SearchEnvironment | None = None,
    *,
    llm: Any,
    policy: Any = "heuristic",
    belief: Any = "implicit",
    gates: Any = DEFAULT_GATES,
    max_steps: int = 8,
    seed: int = 0,
    lam: float = 1e-3,
    out: str | os.PathLike | None = None,
    resume: bool = True,
    answer_max_tokens: int = 24,
    policy_params: dict[str, Any] | None = None,
    belief_params: dict[str, Any] | None = None,
) -> Episode:
    """Run one search episode with the PBAI loop and return it (see the module doc).

    - ``question``: a :class:`SearchQuestion` (gold answer and supporting ids make it scorable) or a string.
    - ``env``: a :class:`SearchEnvironment` (default: BM25 over the shipped corpus, k = 3).
    - ``llm``: a backend (``get_llm(...)``) or a spec string; it answers at the end on every path, and serves
      the ``llm`` policy, the predicate belief's extraction and gates that sample.
    - ``policy``: "heuristic", "llm" or an object with ``propose(ctx)``; ``policy_params`` configure a named one.
    - ``belief``: "implicit", "predicate" or an instance; ``belief_params`` configure a named one.
    - ``gates``: ``stopping_gates`` names, ``(name, params)`` pairs or instances (default: llm_self_stop, exhaustion).
    - ``max_steps``: the hard step budget; ``seed``: every model call's seed derives from it; ``lam``: λ of Eq. 1.
    - ``out``: a JSONL path; each step is written as it is made. With ``resume=True`` an existing file with the
      same configuration is continued (or returned, when finished); a different one raises EpisodeResumeError.
    """
    lam = _check_arguments(max_steps, seed, lam, answer_max_tokens)
    qrec = question_record(question)
    env = SearchEnvironment() if env is None else env
    if not isinstance(env, SearchEnvironment):
        raise EpisodeError(f"env must be a SearchEnvironment, got {type(env).__name__}")
    llm = as_backend(llm, error=EpisodeError, quiet=False,
                     why="; every episode ends with the model answering from its state")
    policy = make_policy(policy, **(policy_params or {}))
    belief_params = dict(belief_params or {})
    if isinstance(belief, str):
        belief_params.setdefault("token_counter", env.token_counter)
    belief = make_belief(belief, **belief_params)
    gate_list = make_gates(gates)
    for g in gate_list:
        if callable(getattr(g, "bind", None)):
            g.bind(llm)
    config = episode_config(qrec, env, policy, belief, gate_list, llm, max_steps, seed, lam, answer_max_tokens)
    if resume:
        _regrade_if_only_gold_changed(out, config)
    journal, writer = FORMAT.open(out, config, resume=resume)
    episode = Episode.from_journal(journal) if journal is not None else Episode(config)
    episode.path = None if out is None else Path(out)
    try:
        if episode.final is None:
            _continue(episode, writer, qrec, env, llm, policy, belief, gate_list, max_steps, seed, answer_max_tokens)
    finally:
        writer.close()
    return episode


#: the settings of an episode's header that only its score reads (the gold answer): a change re-grades it
GRADED_AGAINST = ("question.answer", "question.aliases")


def _regrade_if_only_gold_changed(out: str | os.PathLike | None, config: dict[str, Any]) -> None:
    """An episode file whose header differs from ``config`` only in the gold answer or its aliases is re-graded:
    its header takes the new ones (the score is computed from them when the episode is read), with one warning
    line; nothing is asked again. Not with the oracle reader, whose answers were read from the old gold data: then
    (and for any other difference: the question, the corpus, a setting) :meth:`FORMAT.open` refuses, naming it."""
    if out is None or (config.get("llm") or {}).get("backend") == "oracle":
        return
    changes = refresh_header(FORMAT, out, config, lambda key: key in GRADED_AGAINST)
    if changes:
        warnings.warn(f"{out}: re-graded against the changed {', '.join(k for k, _, _ in changes)} of question "
                      f"{config['question'].get('id')!r} in the data; no model was asked", StaleResultWarning,
                      stacklevel=3)


def _continue(episode: Episode, writer: JournalWriter, qrec: dict[str, Any], env: SearchEnvironment, llm: Any,
              policy: Any, belief: Any, gates: Sequence[Any], max_steps: int, seed: int, answer_max_tokens: int) -> None:
    """Start the episode (or restore it where its file ends), run steps until a gate stops it or the budget runs
    out, and answer."""
    q = qrec["question"]
    _start_or_restore(episode, writer, qrec, llm, belief, gates, seed)
    stop = _stop_of(episode.steps[-1], gates) if episode.steps else None
    t = len(episode.steps)
    while stop is None and t < max_steps:
        t += 1
        step = _one_step(t, q, env, llm, policy, belief, gates, episode.steps, seed)
        episode.steps.append(step)
        writer.write(step.to_record())
        stop = _stop_of(step, gates)
    if stop is None:
        stop = ("budget", "max_steps", f"budget: all {max_steps} steps used")
    answer, tokens = final_answer(q, belief.render(), llm, seed=step_seed(seed, 0, "answer"),
                                  max_tokens=answer_max_tokens, token_counter=env.token_counter)
    proposed = next((s.query for s in reversed(episode.steps) if s.action == "answer"), None)
    episode.final = jsonable({
        "stop_reason": stop[0], "stop_gate": stop[1], "stop_detail": stop[2], "answer": answer.to_record(),
        "proposed_answer": proposed, "open_questions": belief.open_questions(), "tokens": tokens,
    })
    writer.write({"type": "final", **episode.final})


def _start_or_restore(episode: Episode, writer: JournalWriter, qrec: dict[str, Any], llm: Any, belief: Any,
                      gates: Sequence[Any], seed: int) -> None:
    """A new episode: the belief's start record. A resumed one: the belief and the gates as the last recorded
    step left them."""
    if episode.start is None:
        if episode.steps:
            raise EpisodeError(f"{episode.path} holds steps but no start record; the file is damaged "
                               "(resume=False starts over)")
        init = belief.start(qrec["question"], llm=llm, seed=step_seed(seed, 0, "init"),
                            decomposition=qrec["decomposition"])
        episode.start = {"init": jsonable(init), "belief": belief.snapshot()}
        writer.write({"type": "start", **episode.start})
    else:
        belief.restore(episode.steps[-1].belief if episode.steps else episode.start["belief"])
    for g in gates:
        if callable(getattr(g, "restore", None)):
            g.restore(episode.steps)
        else:
            g.reset()
            for s in episode.steps:
                g.update(s)


def _stop_of(step: SearchStep, gates: Sequence[Any]) -> tuple[str, str, str] | None:
    """(stop reason, gate name, detail) of the first gate (in list order) that said stop at ``step``."""
    for g in gates:
        name = getattr(g, "name", type(g).__name__)
        d = step.gates.get(name)
        if d and d.get("stop"):
            return getattr(g, "stop_kind", "answered"), name, d.get("reason", "")
    return None


def _one_step(t: int, question: str, env: SearchEnvironment, llm: Any, policy: Any, belief: Any, gates: Sequence[Any],
              history: list[SearchStep], seed: int) -> SearchStep:
    """Step t: select an action, observe, update the belief, then let every gate decide on the step."""
    ctx = PolicyContext(question, belief, list(history), env, llm, step_seed(seed, t, "policy"), t, env.token_counter)
    action, prec = policy.propose(ctx)
    obs = env.step(action)
    documents = {i: f"{env.document(i).title}: {env.document(i).text}" for i in obs.passage_ids}
    update = belief.update(t, action, obs, llm=llm, seed=step_seed(seed, t, "update"), documents=documents)
    step = SearchStep(
        query=action.argument, passage_ids=obs.passage_ids, action=action.kind, t=t, question=question,
        scores=obs.scores, observation=obs.text, cost=obs.cost, error=obs.error, belief=belief.snapshot(),
        policy=jsonable(prec), update=jsonable(update),
    )
    gate_tokens = []
    for g in gates:
        decision = g.update(step)
        rec = decision.to_record() if callable(getattr(decision, "to_record", None)) else \
            {"stop": bool(decision.stop), "reason": str(decision.reason), "signals": dict(decision.signals)}
        step.gates[getattr(g, "name", type(g).__name__)] = jsonable(rec)
        gate_tokens.append(rec["signals"].get("tokens") if isinstance(rec.get("signals"), dict) else None)
    step.llm_tokens = add_tokens(prec.get("tokens"), update.get("tokens"), *gate_tokens)
    return step
