"""The PBAI loop (Predicate-Based Adaptive Identification): evaluate stop → select action → observe → update belief.

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
``belief_complete`` and ``answer_convergence``, "budget" for ``fixed_budget``), or "budget" when ``max_steps``
run out. Without the ``llm_self_stop`` gate an ANSWER action is recorded (a proposal, Cost 0) and the search
goes on. **Every exit** goes through :func:`~uncertainty_lab.search.answer.final_answer`: the model answers
from the state, the answer is read and validated the same way, and an empty or abstaining answer is recorded
as a failure, never hidden; the final record also lists the questions still open.

Randomness: each model call's seed derives from (seed, t, purpose) (:func:`~uncertainty_lab.search.episode.step_seed`),
so a resumed episode makes exactly the calls an uninterrupted one makes (and finds them in the cache).
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..datasets.search import SearchQuestion
from ..journal import JournalWriter, drop_cut_tail
from .answer import final_answer
from .belief import make_belief
from .environment import SearchEnvironment
from .episode import Episode, EpisodeError, EpisodeResumeError, SearchStep, _add_tokens, read_jsonl, step_seed
from .gates import make_gates
from .policies import PolicyContext, make_policy

__all__ = ["DEFAULT_GATES", "run_episode"]

DEFAULT_GATES = ("llm_self_stop", "exhaustion")


def _jsonable(x: Any) -> Any:
    import numpy as np

    if isinstance(x, np.generic):
        return _jsonable(x.item())
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, float) and not math.isfinite(x):
        return None  # NaN/inf are not JSON; a missing signal is recorded as null
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    label = getattr(x, "label", None)
    if isinstance(label, str):
        return label
    return getattr(x, "name", None) or type(x).__name__


def _gate_config(g: Any) -> dict[str, Any]:
    from ..parameters import parameters

    params = {p.name: _jsonable(getattr(g, p.name, None)) for p in parameters(type(g))}
    return {"name": getattr(g, "name", type(g).__name__), "params": params}


def _llm_identity(llm: Any) -> dict[str, str]:
    backend = llm.cache_backend_name() if callable(getattr(llm, "cache_backend_name", None)) else getattr(llm, "name", type(llm).__name__)
    model = llm.model_id() if callable(getattr(llm, "model_id", None)) else str(getattr(llm, "model", ""))
    return {"backend": str(backend), "model": str(model)}


def _question_record(question: SearchQuestion | str) -> dict[str, Any]:
    if isinstance(question, SearchQuestion):
        return {"id": question.id, "question": question.question, "answer": question.answer,
                "aliases": list(question.aliases), "supporting_ids": list(question.supporting_ids),
                "decomposition": [s.question for s in question.decomposition]}
    if isinstance(question, str) and question.strip():
        return {"id": "", "question": question.strip(), "answer": "", "aliases": [], "supporting_ids": [],
                "decomposition": []}
    raise EpisodeError(f"question must be a SearchQuestion (load_search_questions()) or a non-empty string, got {question!r}")


def _config_of(obj: Any) -> dict[str, Any]:
    cfg = getattr(obj, "config", None)
    if callable(cfg):
        return _jsonable(cfg())
    return {"name": getattr(obj, "name", type(obj).__name__), "params": {}}


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
    if isinstance(max_steps, bool) or not isinstance(max_steps, int) or max_steps < 1:
        raise EpisodeError(f"max_steps must be a positive integer (the step budget), got {max_steps!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise EpisodeError(f"seed must be a non-negative integer, got {seed!r}")
    try:
        lam = float(lam)
    except (TypeError, ValueError):
        raise EpisodeError(f"lam must be a number >= 0 (the price of one token), got {lam!r}") from None
    if not lam >= 0:
        raise EpisodeError(f"lam must be a number >= 0 (the price of one token), got {lam!r}")
    if isinstance(answer_max_tokens, bool) or not isinstance(answer_max_tokens, int) or answer_max_tokens < 1:
        raise EpisodeError(f"answer_max_tokens must be a positive integer, got {answer_max_tokens!r}")
    qrec = _question_record(question)
    if env is None:
        env = SearchEnvironment()
    if not isinstance(env, SearchEnvironment):
        raise EpisodeError(f"env must be a SearchEnvironment, got {type(env).__name__}")
    if isinstance(llm, str):
        from ..llm import get_llm

        llm = get_llm(llm)
    if not callable(getattr(llm, "complete", None)):
        raise EpisodeError(f"llm must be a language-model backend (get_llm('embedded')) or a spec string, got {llm!r}; "
                           "every episode ends with the model answering from its state")
    policy = make_policy(policy, **(policy_params or {}))
    belief_params = dict(belief_params or {})
    if isinstance(belief, str):
        belief_params.setdefault("token_counter", env.token_counter)
    belief = make_belief(belief, **belief_params)
    gate_list = make_gates(gates)
    for g in gate_list:
        if callable(getattr(g, "bind", None)):
            g.bind(llm)

    config = _jsonable({
        "question": qrec, "env": env.config(), "policy": _config_of(policy), "belief": _config_of(belief),
        "gates": [_gate_config(g) for g in gate_list], "llm": _llm_identity(llm), "max_steps": max_steps,
        "seed": seed, "lam": lam, "answer_max_tokens": answer_max_tokens,
    })
    episode = Episode(config)

    # --- resume or start -----------------------------------------------------------------------------
    path = Path(out) if out is not None else None
    mode = "w"
    if path is not None and resume and path.is_file() and path.stat().st_size > 0:
        header, start, steps, final, good = read_jsonl(path)
        if header is not None:
            old = header["config"]
            diff = sorted(k for k in set(config) | set(old) if config.get(k) != old.get(k))
            if diff:
                detail = "; ".join(f"{k}: file {old.get(k)!r} vs now {config.get(k)!r}" for k in diff)
                raise EpisodeResumeError(
                    f"cannot resume {path}: it was made with a different configuration ({detail[:600]}). Pass the "
                    "same arguments to continue it, resume=False to overwrite it, or another out path")
            episode = Episode(config, start, [SearchStep.from_record(r) for r in steps], final, path)
            if final is not None:
                return episode
            drop_cut_tail(path, good)
            mode = "a"
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    episode.path = path

    writer = JournalWriter(path, mode)
    try:
        if mode == "w":
            writer.write(episode.header())
        q = qrec["question"]
        if episode.start is None:
            if episode.steps:
                raise EpisodeError(f"{path} holds steps but no start record; the file is damaged (resume=False starts over)")
            init = belief.start(q, llm=llm, seed=step_seed(seed, 0, "init"), decomposition=qrec["decomposition"])
            episode.start = {"init": _jsonable(init), "belief": belief.snapshot()}
            writer.write({"type": "start", **episode.start})
        else:
            belief.restore(episode.steps[-1].belief if episode.steps else episode.start["belief"])
        for g in gate_list:
            if callable(getattr(g, "restore", None)):
                g.restore(episode.steps)
            else:
                g.reset()
                for s in episode.steps:
                    g.update(s)
        stop = _stop_of(episode.steps[-1], gate_list) if episode.steps else None
        t = len(episode.steps)
        while stop is None and t < max_steps:
            t += 1
            step = _one_step(t, q, env, llm, policy, belief, gate_list, episode.steps, seed)
            episode.steps.append(step)
            writer.write(step.to_record())
            stop = _stop_of(step, gate_list)
        if stop is None:
            stop = ("budget", "max_steps", f"budget: all {max_steps} steps used")
        answer, tokens = final_answer(q, belief.render(), llm, seed=step_seed(seed, 0, "answer"),
                                      max_tokens=answer_max_tokens, token_counter=env.token_counter)
        proposed = next((s.query for s in reversed(episode.steps) if s.action == "answer"), None)
        episode.final = _jsonable({
            "stop_reason": stop[0], "stop_gate": stop[1], "stop_detail": stop[2], "answer": answer.to_record(),
            "proposed_answer": proposed, "open_questions": belief.open_questions(), "tokens": tokens,
        })
        writer.write({"type": "final", **episode.final})
    finally:
        writer.close()
    return episode


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
    # select action
    ctx = PolicyContext(question, belief, list(history), env, llm, step_seed(seed, t, "policy"), t, env.token_counter)
    action, prec = policy.propose(ctx)
    # observe
    obs = env.step(action)
    # update belief
    documents = {i: f"{env.document(i).title}: {env.document(i).text}" for i in obs.passage_ids}
    update = belief.update(t, action, obs, llm=llm, seed=step_seed(seed, t, "update"), documents=documents)
    step = SearchStep(
        query=action.argument, passage_ids=obs.passage_ids, action=action.kind, t=t, question=question,
        scores=obs.scores, observation=obs.text, cost=obs.cost, error=obs.error, belief=belief.snapshot(),
        policy=_jsonable(prec), update=_jsonable(update),
    )
    # evaluate stop (for the next iteration)
    gate_tokens = []
    for g in gates:
        decision = g.update(step)
        rec = decision.to_record() if callable(getattr(decision, "to_record", None)) else \
            {"stop": bool(decision.stop), "reason": str(decision.reason), "signals": dict(decision.signals)}
        step.gates[getattr(g, "name", type(g).__name__)] = _jsonable(rec)
        gate_tokens.append(rec["signals"].get("tokens") if isinstance(rec.get("signals"), dict) else None)
    step.llm_tokens = _add_tokens(prec.get("tokens"), update.get("tokens"), *gate_tokens)
    return step

