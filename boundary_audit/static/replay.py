"""Partial results the def-use engine gives again instead of evaluating them again.

`Engine._guarded` memoises a value only when no cycle cut made it return into an evaluation
still in progress above it: such a partial value depends on what is in progress, so a later
evaluation of the same key, on another path through the same cycle, evaluates it again. On
real trees that was most of the work: openai-agents-python took 149,560 steps for 14,908
distinct keys, one key of a workspace-path helper evaluated 10,512 times.

A partial value is kept instead as a `Replay`, with what its evaluation depended on. A later
evaluation of the key would retrace exactly the same steps when:
- no key it evaluated is in progress now (it would be cut) or memoised since (it would be
  read), and every key in progress that it was cut at still is;
- the limits it ran under give up nowhere: at least the steps it needed are left
  (`Replay.room`, which follows the capped parameter lookups), and every test of the call
  depth bound answers as it did (`Replay.peak`, `Replay.floor`);
- the corpus has the same generation and kept the same extractors and shared engines
  (`Corpus.churn`); the ones it used are used again, in the same order, so that the bounds
  on them drop the same ones next (`Corpus.retouch`).
It is kept only if its evaluation memoised nothing in its own engine, stepped in no engine
whose memo outlives it or that reads another's (`Engine.lasting`, `LASTING_STEPS`; the
engines made for it alone start empty each time), gave up on no step (`Budget.gave_up`: with
more steps left it would not) and read no cross-file lookup still in progress
(`Corpus.unstable`).
Giving it again then charges the same steps to the same budget: what a sink finds, and where
its budget runs out, are those of evaluating again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from boundary_audit.static.dataflow_limits import MAX_CALL_DEPTH, PARAM_FLOOR, PARAM_SHARE

if TYPE_CHECKING:
    from boundary_audit.static.dataflow import Budget, Engine
    from boundary_audit.static.values import AValue

Key = tuple[object, ...]
_NEVER = 1 << 30

LASTING_STEPS = [0]
"""Steps taken by lasting engines (`Engine.lasting`: kept by the corpus, or reading another
engine's memo), in this process."""
DEPTHS = [-1, _NEVER]
"""The deepest call depth `too_deep` said no at and the shallowest it said yes at, in the
evaluation in progress (any engine's)."""


class Replay:
    """A partial result of one key and what evaluating it again depends on: the keys it
    evaluated (`touched`), the evaluations in progress it was cut at (`cuts`), the steps it
    charged to the budget (`steps`, `own` of them in its engine), the least limit it needed
    relative to where it began (`room`), the deepest depth at which the call depth bound let
    it on and the shallowest at which it stopped it (relative to its own depth), the
    corpus's state, and the kept extractors and shared engines it used, last use last
    (`Corpus.touches`: giving it again uses them again, so the bounds drop the same ones)."""

    __slots__ = (
        "value",
        "touched",
        "cuts",
        "steps",
        "own",
        "room",
        "peak",
        "floor",
        "state",
        "uses",
    )

    def __init__(
        self,
        value: AValue,
        touched: frozenset[Key],
        cuts: frozenset[Key],
        steps: int,
        own: int,
        room: int,
        depths: tuple[int, int],
        state: tuple[int, int],
        uses: tuple[tuple[bool, object], ...],
    ) -> None:
        self.value = value
        self.touched = touched
        self.cuts = cuts
        self.steps = steps
        self.own = own
        self.room = room
        self.peak, self.floor = depths
        self.state = state
        self.uses = uses


class Frame:
    """What one evaluation in progress started from, for `keep`."""

    __slots__ = (
        "budget",
        "own",
        "lasting",
        "gave_up",
        "memo",
        "trail",
        "cuts",
        "steps",
        "depth",
        "unstable",
        "uses",
        "need",
        "depths",
        "room",
    )

    def __init__(self, engine: Engine) -> None:
        budget = self.budget = engine.budget
        self.own = engine._own
        self.lasting = LASTING_STEPS[0]
        self.gave_up = budget.gave_up
        self.memo = len(engine._memo)
        self.trail = len(engine._trail)
        self.cuts = len(engine._cuts)
        self.steps = budget.steps
        self.depth = engine.depth
        corpus = engine.corpus
        self.unstable = corpus.unstable if corpus is not None else 0
        self.uses = len(corpus.touches) if corpus is not None else 0
        self.need, budget.need = budget.need, 0
        self.depths = (DEPTHS[0], DEPTHS[1])
        DEPTHS[0], DEPTHS[1] = -1, _NEVER
        self.room = 0

    def close(self) -> None:
        """The evaluation ended: keep what it needed and which depths it asked, and give
        them to the one in progress around it."""
        budget = self.budget
        self.room = max(budget.need, budget.steps) - self.steps
        budget.need = max(self.need, budget.need)
        peak, floor = DEPTHS
        outer_peak, outer_floor = self.depths
        self.depths = (
            peak - self.depth if peak >= 0 else -_NEVER,
            floor - self.depth if floor < _NEVER else _NEVER,
        )
        DEPTHS[0], DEPTHS[1] = max(outer_peak, peak), min(outer_floor, floor)


def state(engine: Engine) -> tuple[int, int]:
    """The corpus's state a kept result depends on (`Corpus.generation`, `Corpus.churn`)."""
    corpus = engine.corpus
    return (corpus.generation, corpus.churn) if corpus is not None else (0, 0)


def keep(engine: Engine, key: Key, value: AValue, depth: int, frame: Frame) -> None:
    """Keep `key`'s partial `value` (its evaluation began at stack `depth`, `frame`) if
    evaluating it again would retrace its steps. The first such value only marks the key:
    most are never asked for again, and the second pass's steps are those the later passes
    retrace (what the first memoised is read by them, not evaluated)."""
    own = engine._own - frame.own
    if (
        LASTING_STEPS[0] - frame.lasting != (own if engine.lasting else 0)
        or len(engine._memo) != frame.memo
        or engine.budget is not frame.budget
        or frame.budget.gave_up != frame.gave_up
        or (engine.corpus is not None and engine.corpus.unstable != frame.unstable)
    ):
        return
    replays = engine._replays
    if key not in replays:
        replays[key] = None
        return
    busy = engine._busy
    corpus = engine.corpus
    uses = corpus.touches[frame.uses :] if corpus is not None else []
    replays[key] = Replay(
        value,
        frozenset(engine._trail[frame.trail :]),
        frozenset(k for k in engine._cuts[frame.cuts :] if busy.get(k, depth) < depth),
        frame.budget.steps - frame.steps,
        own,
        frame.room,
        frame.depths,
        state(engine),
        tuple(reversed(dict.fromkeys(reversed(uses)))),
    )


def replay(engine: Engine, kept: Replay) -> AValue | None:
    """`kept`'s value if evaluating its key now would retrace the steps that made it, with
    those steps charged; else None (evaluate it)."""
    budget: Budget = engine.budget
    depth = engine.depth
    if (
        budget.limit - budget.steps < kept.room
        or depth + kept.peak >= MAX_CALL_DEPTH
        or depth + kept.floor < MAX_CALL_DEPTH
        or state(engine) != kept.state
    ):
        return None
    busy = engine._busy
    touched = kept.touched
    if not busy.keys().isdisjoint(touched) or not engine._memo.keys().isdisjoint(touched):
        return None
    low = _NEVER
    for k in kept.cuts:
        at = busy.get(k)
        if at is None:
            return None
        low = min(low, at)
    budget.need = max(budget.need, budget.steps + kept.room)
    budget.steps += kept.steps
    engine._own += kept.own
    if engine.lasting:
        LASTING_STEPS[0] += kept.own
    engine._low = min(engine._low, low)
    DEPTHS[0] = max(DEPTHS[0], depth + kept.peak)
    DEPTHS[1] = min(DEPTHS[1], depth + kept.floor)
    engine._trail.extend(touched)
    engine._cuts.extend(kept.cuts)
    if kept.uses and engine.corpus is not None:
        engine.corpus.retouch(kept.uses)
    return kept.value


def too_deep(engine: Engine, key: Key | None = None) -> bool:
    """Whether a trace in `engine` crosses no further function boundary (`MAX_CALL_DEPTH`).
    The answer is kept in `DEPTHS`, and the `key` of a parameter lookup it stops in the
    engine's trail: evaluating again reaches this test only while that key is neither
    memoised nor in progress."""
    depth = engine.depth
    if depth < MAX_CALL_DEPTH:
        if depth > DEPTHS[0]:
            DEPTHS[0] = depth
        return False
    if depth < DEPTHS[1]:
        DEPTHS[1] = depth
    if key is not None:
        engine._trail.append(key)
    return True


def share(left: int) -> int:
    """The steps a capped lookup may spend of `left` (`PARAM_SHARE`, `PARAM_FLOOR`)."""
    num, den = PARAM_SHARE
    return max(left * num // den, min(left, PARAM_FLOOR))


def unshare(needed: int) -> int:
    """The fewest steps left at which `share` gives at least `needed` (it is monotone)."""
    if needed <= PARAM_FLOOR:
        return max(needed, 0)
    num, den = PARAM_SHARE
    left = -(-needed * den // num)
    while left * num // den < needed:
        left += 1
    while (left - 1) * num // den >= needed:
        left -= 1
    return left
