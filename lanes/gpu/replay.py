"""Replaying a request trace: hold times from a step-time profile, then the slot pool.

The slot pool needs one number per request: the seconds it holds a slot.  A
trace gives tokens instead, so this module prices them with the engine's
step model (:func:`lanes.gpu.steps.step_cost`, by default on the
``h200-measured`` profile, Llama 3.1 8B):

``hold_s = prefill(prompt_tokens) + output_tokens x decode_step(batch)``

* ``prefill(p)`` is one prefill step of the whole prompt, alone on the GPU;
* ``decode_step(batch)`` is one decode step with ``batch`` sequences (the
  pool's slot count: the pool keeps that many sequences decoding), each
  holding the trace's mean context, ``mean(prompt) + mean(output) / 2``
  tokens (a decoder is on average half-way through its output).

These are the hold times of a pool that runs full; they ignore queueing
inside the engine (that is what :func:`lanes.gpu.steps.simulate` models,
and it takes a trace too).  Scheduled at every arrival and end (``tick_s=0``,
the default scenario's clock) the pool keeps each hold exactly, a fraction of
a second included; on a tick clock it rounds each hold up to whole ticks (at
the anchor's ``tick_s=1``, whole seconds).  :func:`zero_wait_load` measures
the slots the holds would keep busy if no request waited, at every instant.

>>> from lanes.pool.traces import load_trace
>>> table = trace_table(load_trace("conv").window(0, 600), policies=("priority", "reserve:8"))
>>> [r.policy.spec for r in table.results]
['priority', 'reserve:8']
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from itertools import repeat
from os import PathLike
from typing import Sequence

from .. import _checks
from ..pool.arrivals import ArrivalStream
from ..pool.engine import simulate
from ..pool.policies import DEFAULT_POLICIES, Policy
from ..pool.results import SlotPoolResult
from ..pool.table import PolicyTable, run_table
from ..pool.scenario import Scenario
from ..pool.sweep import scan_reserve
from ..pool.traces import Trace, load_trace, trace_scenario, trace_stream
from .hardware import Hardware, get_hardware, get_model
from .transformer import Model
from .steps import MAX_STEP_SEQUENCES, Request, step_cost

DEFAULT_HARDWARE = "h200-measured"
DEFAULT_MODEL = "llama-3.1-8b"
#: Largest pool :func:`smallest_reserve` scans: it runs one replay per R in
#: ``0 .. slots``, so this bounds its time (a few seconds per hundred runs of
#: an hour's trace here).
MAX_SCAN_SLOTS = 256


@dataclass(frozen=True)
class HoldProfile:
    """The numbers that turn tokens into slot seconds.

    Attributes
    ----------
    decode_step_s : float
        One decode step at ``batch`` sequences of ``context_tokens`` each, seconds.
    batch : int
        Sequences decoding together (the pool's slots).
    context_tokens : int
        Tokens in each decoder's KV cache for ``decode_step_s``.
    hardware, model : str
        Catalogue names of the profile.
    """

    decode_step_s: float
    batch: int
    context_tokens: int
    hardware: str
    model: str


def hold_profile(
    trace: Trace,
    *,
    batch: int = 64,
    hardware: str | Hardware = DEFAULT_HARDWARE,
    model: str | Model = DEFAULT_MODEL,
) -> HoldProfile:
    """The decode step a replay of ``trace`` uses (see the module docstring)."""
    _checks.instance("trace", trace, Trace)
    m, h = _resolve(model, hardware)
    return _profile(trace, _checks.integer("batch", batch, lo=1, hi=MAX_STEP_SEQUENCES), m, h)


def _resolve(model: str | Model, hardware: str | Hardware) -> tuple[Model, Hardware]:
    m = model if isinstance(model, Model) else get_model(model)
    h = hardware if isinstance(hardware, Hardware) else get_hardware(hardware)
    return m, h


def _profile(trace: Trace, batch: int, m: Model, h: Hardware) -> HoldProfile:
    n = trace.n_requests
    context = round(sum(trace.prompt_tokens) / n + sum(trace.output_tokens) / n / 2)
    step = step_cost([(context, 1)] * batch, model=m, hardware=h).duration_s
    return HoldProfile(step, batch, context, h.name, m.name)


def hold_times_s(
    trace: Trace,
    *,
    batch: int = 64,
    hardware: str | Hardware = DEFAULT_HARDWARE,
    model: str | Model = DEFAULT_MODEL,
) -> list[float]:
    """Seconds each request of ``trace`` holds a slot: its prefill plus its outputs' decode steps.

    Parameters
    ----------
    trace : Trace
        The requests.
    batch : int
        Sequences decoding together: the pool's slot count (>= 1).
    hardware, model : str or catalogue entry
        The step-time profile (default ``h200-measured``, ``llama-3.1-8b``).
    """
    _checks.instance("trace", trace, Trace)
    m, h = _resolve(model, hardware)
    step = _profile(trace, _checks.integer("batch", batch, lo=1, hi=MAX_STEP_SEQUENCES), m, h).decode_step_s
    return [_prefill_s(p, m, h) + o * step for p, o in zip(trace.prompt_tokens, trace.output_tokens)]


@lru_cache(maxsize=1 << 16)
def _prefill_s(prompt_tokens: int, m: Model, h: Hardware) -> float:
    """One prompt's prefill step, s: kept, since a trace's resamples share their prompt lengths."""
    return step_cost([(0, prompt_tokens)], model=m, hardware=h).duration_s


def replay_inputs(
    trace: Trace | str,
    base: Scenario | None = None,
    *,
    hardware: str | Hardware = DEFAULT_HARDWARE,
    model: str | Model = DEFAULT_MODEL,
):
    """The scenario and arrival stream of a replay: ``(scenario, stream)``.

    ``trace`` is a :class:`~lanes.pool.traces.Trace` or a shipped name or
    path; ``base`` gives the pool, the backlog and the seed (default: the
    anchor scenario); the decode batch is ``base.slots``.
    """
    tr = load_trace(trace) if isinstance(trace, (str, PathLike)) else _checks.instance("trace", trace, Trace)
    base = Scenario() if _checks.instance("base", base, Scenario, none_ok=True) is None else base
    holds = hold_times_s(tr, batch=base.slots, hardware=hardware, model=model)
    scenario = trace_scenario(tr, holds, base)
    return scenario, trace_stream(tr, holds, scenario)


def replay(
    trace: Trace | str,
    policy: str | Policy = "priority",
    base: Scenario | None = None,
    *,
    hardware: str | Hardware = DEFAULT_HARDWARE,
    model: str | Model = DEFAULT_MODEL,
    **extensions: object,
) -> SlotPoolResult:
    """One policy of the slot pool on a trace (the fast engine)."""
    scenario, stream = replay_inputs(trace, base, hardware=hardware, model=model)
    return simulate(scenario, policy, stream=stream, **extensions)


def trace_table(
    trace: Trace | str,
    base: Scenario | None = None,
    policies: Sequence[str | Policy] = DEFAULT_POLICIES,
    *,
    hardware: str | Hardware = DEFAULT_HARDWARE,
    model: str | Model = DEFAULT_MODEL,
    **extensions: object,
) -> PolicyTable:
    """Several policies of the slot pool on one trace, the stream built once."""
    scenario, stream = replay_inputs(trace, base, hardware=hardware, model=model)
    return run_table(scenario, policies, stream=stream, **extensions)


def smallest_reserve(
    trace: Trace | str,
    target_p99_s: float = 2,
    base: Scenario | None = None,
    *,
    hardware: str | Hardware = DEFAULT_HARDWARE,
    model: str | Model = DEFAULT_MODEL,
) -> int | None:
    """Smallest R for which ``reserve:R`` keeps the interactive p99 wait at or below ``target_p99_s``.

    Every R from 0 to the pool's slots is tried in order (no gaps); ``None``
    when none meets the target.  A run that admits no request does not count
    as meeting it.  The pool may have at most :data:`MAX_SCAN_SLOTS` slots.
    """
    target = _checks.number("target_p99_s", target_p99_s, lo=0)
    if base is not None and _checks.instance("base", base, Scenario).slots > MAX_SCAN_SLOTS:
        _checks.limit("base slots", base.slots, MAX_SCAN_SLOTS, why="smallest_reserve runs one replay per reserve")
    scenario, stream = replay_inputs(trace, base, hardware=hardware, model=model)
    return scan_reserve(scenario, lambda r: 0 <= r.p99_s <= target, stream=stream)[0]


def trace_requests(trace: Trace) -> list[Request]:
    """The trace's requests for the step-level simulator (which also takes the trace itself)."""
    _checks.instance("trace", trace, Trace)
    return [
        Request(prompt_tokens=p, output_tokens=o, arrival_s=t)
        for t, p, o in zip(trace.arrival_s, trace.prompt_tokens, trace.output_tokens)
    ]


@dataclass(frozen=True)
class ZeroWaitLoad:
    """Interactive requests in slots if every one got a slot on arrival, second by second.

    Attributes
    ----------
    mean : tuple of float
        The time-average count over each whole second of the window: its sum is the
        slot-seconds the holds fill inside the window, exactly.
    most : tuple of int
        The most requests holding a slot at one instant of each second.
    """

    mean: tuple[float, ...]
    most: tuple[int, ...]

    @property
    def mean_busy(self) -> float:
        """Mean busy slots over the window (Little's L, less the holds cut at its end)."""
        return sum(self.mean) / len(self.mean)

    @property
    def peak(self) -> int:
        """The most requests holding a slot at one instant of the window."""
        return max(self.most)


def zero_wait_load(stream: ArrivalStream) -> ZeroWaitLoad:
    """The interactive busy count of ``stream`` if no request waited, exact at every instant.

    Request i holds a slot from its arrival (its second plus its offset) for its
    hold, whole or not, over ``[arrival, arrival + hold)``: a slot freed at an
    instant is free for a request arriving at it.  Counted over the stream's
    window (``stream.seconds``, whole seconds); holds running past its end are
    cut there.  Unlike :func:`lanes.pool.littles.zero_wait_busy`, which looks at
    whole seconds only, this sees a hold of a fraction of a second wherever it
    falls, so its mean is the slot time the holds fill and its peak the most
    at one instant.
    """
    _checks.instance("stream", stream, ArrivalStream)
    end = stream.seconds or max(
        (t + 1 for t in stream.arrival_tick), default=1)
    offsets = stream.arrival_offset_s or repeat(0.0)
    events = []
    for t, u, h in zip(stream.arrival_tick, offsets, stream.inter_service_s):
        a = t + u
        if a < end:
            events += ((a, 1), (min(a + h, end), -1))
    events.sort()  # at one instant an end (-1) comes before a start
    area, most = [0.0] * end, [0] * end
    busy, last = 0, 0.0
    for when, step in events:
        while last < when:  # the count ``busy`` holds over [last, when)
            b = int(last)
            edge = min(when, b + 1)
            area[b] += busy * (edge - last)
            most[b] = max(most[b], busy)
            last = edge
        busy += step
        if step > 0:
            b = int(when)
            most[b] = max(most[b], busy)
    while last < end:
        b = int(last)
        area[b] += busy * (b + 1 - last)
        most[b] = max(most[b], busy)
        last = b + 1
    return ZeroWaitLoad(tuple(area), tuple(most))
