"""The book's explorers, defined once: controls, the model call and the figure, as plain data.

Each function here (``headroom``, ``policy``, ...) returns an :class:`Explorer`:
its controls (:class:`Control`), and ``view(**values)``, which runs the same
``lanes`` calls for those values and returns a :class:`View` (charts of
:mod:`lanes.display.svg` and a small table).  Two front ends read it:

- JupyterLab: :func:`lanes.display.pool.widgets.lab` turns the controls into
  ipywidgets and draws the charts with matplotlib (:func:`to_matplotlib`);
- the web book: Pyodide runs this module in a Web Worker (``book/_ext/lanes_live``),
  the page draws the controls as HTML inputs and shows :func:`lanes.display.svg.render`'s SVG.

An explorer also knows the call that made it (``call``, JSON from :func:`encode_call`);
the notebook output carries it, so the book re-creates exactly the notebook's
explorer (:func:`from_call`).  Standard library only (it runs in the browser,
where there is no matplotlib, pandas or ipywidgets); matplotlib is imported
inside :func:`to_matplotlib`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib
import inspect
import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .. import _checks
from . import svg
from .svg import Band, Bars, Chart, Line, Rule

__all__ = [
    "EXPLORERS", "Control", "Explorer", "View", "decode", "encode", "encode_call", "from_call", "render_json", "to_matplotlib",
]

COLORS = {"interactive": "#1f77b4", "batch": "#ff7f0e", "free": "#d9d9d9", "surge": "#f5d195"}

#: Batch job durations offered by the explorers (label -> inclusive range, s).
BATCH_DURATIONS: dict[str, tuple[int, int]] = {
    "60-180 s (mean 120 s)": (60, 180),
    "30-90 s (mean 60 s)": (30, 90),
    "15-45 s (mean 30 s)": (15, 45),
}

#: Aging thresholds offered by the starvation explorer (label -> seconds or None).
AGING_CHOICES: dict[str, int | None] = {"off": None, "30 min": 1800, "1 h": 3600, "2 h": 7200}

#: Scheduling clocks offered by the explorers (label -> ``Scenario.tick_s``, seconds; 0: event-driven).
CLOCKS: dict[str, float] = {"1 s (the anchor)": 1, "0.1 s": 0.1, "0.02 s (an engine step)": 0.02, "event-driven": 0}

#: Batch sequence sizes offered by the KV headroom explorer (label -> KV tokens).
BATCH_CONTEXTS: dict[str, int] = {"2K (like a chat)": 2_000, "8K": 8_000, "32K": 32_000, "100K": 100_000}


@dataclass(frozen=True)
class Control:
    """One input of an explorer.

    ``kind`` is ``"int"`` or ``"float"`` (a slider from ``lo`` to ``hi`` by ``step``),
    ``"choice"`` (``options``: ``(label, value)`` pairs) or ``"toggle"`` (a checkbox).
    """

    name: str
    label: str
    kind: str
    value: Any
    lo: float | None = None
    hi: float | None = None
    step: float | None = None
    options: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        if self.kind not in ("int", "float", "choice", "toggle"):
            raise ValueError(f"kind must be int, float, choice or toggle (got {self.kind!r})")
        if self.kind == "choice" and self.value not in [v for _, v in self.options]:
            raise ValueError(f"{self.name}: value {self.value!r} is not one of the options")

    def check(self, value: Any) -> Any:
        """``value`` if this control can take it; otherwise ValueError naming the control and what is allowed."""
        if self.kind in ("int", "float"):
            ok = isinstance(value, (int, float)) and not isinstance(value, bool) and self.lo - 1e-9 <= value <= self.hi + 1e-9
            if ok and self.kind == "int":
                ok = float(value).is_integer()
                value = int(value)
            if not ok:
                raise ValueError(f"{self.name} must be a number in [{self.lo:g}, {self.hi:g}] (got {value!r})")
            return value
        if self.kind == "toggle":
            if not isinstance(value, bool):
                raise ValueError(f"{self.name} must be true or false (got {value!r})")
            return value
        if value not in [v for _, v in self.options]:
            raise ValueError(f"{self.name} must be one of {[v for _, v in self.options]} (got {value!r})")
        return value


@dataclass(frozen=True)
class View:
    """What an explorer shows for one setting: charts and table rows (label, text)."""

    charts: tuple[Chart, ...]
    rows: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Explorer:
    """An explorer: ``title``, ``controls`` and ``compute(**values) -> (charts, rows)``; ``call`` is how it was made."""

    name: str
    title: str
    controls: tuple[Control, ...]
    compute: Callable[..., tuple[Any, dict[str, Any]]] = field(repr=False, compare=False)
    call: str = ""

    def defaults(self) -> dict[str, Any]:
        """Every control's starting value."""
        return {c.name: c.value for c in self.controls}

    def view(self, **values: Any) -> View:
        """Run the model for ``values`` (missing controls keep their defaults) and return the charts and table."""
        known = {c.name: c for c in self.controls}
        unknown = sorted(set(values) - set(known))
        if unknown:
            raise ValueError(f"unknown control {unknown[0]!r}; this explorer has {sorted(known)}")
        args = {n: known[n].check(values[n]) if n in values else c.value for n, c in known.items()}
        charts, rows = self.compute(**args)
        return View(tuple(charts), tuple((k, v if isinstance(v, str) else _cell(v)) for k, v in rows.items()))

    def describe(self) -> dict[str, Any]:
        """Title and controls as JSON-ready data (what the page draws its inputs from)."""
        return {"name": self.name, "title": self.title, "controls": [dataclasses.asdict(c) for c in self.controls]}


def _cell(v: Any) -> str:
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:g}" if v == int(v) and abs(v) < 1e15 else repr(round(v, 4))
    return str(v)


# --- calls as JSON -------------------------------------------------------------------------------


def encode(value: Any) -> Any:
    """``value`` as JSON-ready data: numbers, strings, lists, dicts; tuples and ``lanes`` dataclasses tagged."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"cannot encode a non-finite number ({value!r})")
        return value
    if isinstance(value, tuple):
        return {"tuple": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {"dict": {k: encode(v) for k, v in value.items()}}
    if dataclasses.is_dataclass(value) and not isinstance(value, type) and type(value).__module__.startswith("lanes."):
        fields = {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value) if f.init}
        return {"dataclass": f"{type(value).__module__}:{type(value).__qualname__}", "fields": fields}
    raise ValueError(f"cannot encode {type(value).__name__} values in an explorer call (got {value!r})")


def decode(data: Any) -> Any:
    """The inverse of :func:`encode`; only classes of the ``lanes`` package are made."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if "tuple" in data:
        return tuple(decode(v) for v in data["tuple"])
    if "dict" in data:
        return {k: decode(v) for k, v in data["dict"].items()}
    module, _, name = data["dataclass"].partition(":")
    if not module.startswith("lanes.") or "." in name:
        raise ValueError(f"an explorer call may only make lanes classes (got {data['dataclass']!r})")
    cls = getattr(importlib.import_module(module), name)
    return cls(**{k: decode(v) for k, v in data["fields"].items()})


def encode_call(name: str, args: tuple, kwargs: dict[str, Any]) -> str:
    """The JSON text of a call of explorer ``name`` (a key of :data:`EXPLORERS`)."""
    args = _checks.sequence("args", args, what="arguments")
    kwargs = _checks.instance("kwargs", kwargs, dict)
    return json.dumps({"explorer": name, "args": [encode(a) for a in args], "kwargs": {k: encode(v) for k, v in kwargs.items()}},
                      sort_keys=True, separators=(",", ":"))


@functools.lru_cache(maxsize=32)
def from_call(call: str) -> Explorer:
    """The explorer that ``call`` (from :func:`encode_call`) describes, made again."""
    spec = json.loads(call)
    if not isinstance(spec, dict) or spec.get("explorer") not in EXPLORERS:
        raise ValueError(f"explorer must be one of {sorted(EXPLORERS)} (got {spec.get('explorer') if isinstance(spec, dict) else spec!r})")
    return EXPLORERS[spec["explorer"]](*decode(spec.get("args", [])), **decode({"dict": spec.get("kwargs", {})}))


def render_json(call: str, values: str, width: int = 640) -> str:
    """What the book's worker asks for: the view of ``call`` at ``values`` (JSON), as JSON ``{"svg", "rows"}``."""
    call, values = _checks.text("call", call), _checks.text("values", values)
    values = json.loads(values)
    if not isinstance(values, dict):
        raise ValueError(f"values must be a JSON object of control values (got {_checks.show(values)})")
    v = from_call(call).view(**values)
    return json.dumps({"svg": [svg.render(c, width=width) for c in v.charts], "rows": [list(r) for r in v.rows]})


EXPLORERS: dict[str, Callable[..., Explorer]] = {}


def _explorer(name: str) -> Callable[[Callable[..., Explorer]], Callable[..., Explorer]]:
    """Register a builder under ``name`` and stamp each explorer it makes with its call."""

    def wrap(build: Callable[..., Explorer]) -> Callable[..., Explorer]:
        @functools.wraps(build)
        def made(*args: Any, **kwargs: Any) -> Explorer:
            return dataclasses.replace(build(*args, **kwargs), name=name, call=encode_call(name, args, kwargs))

        EXPLORERS[name] = made
        return made

    return wrap


# --- controls ---------------------------------------------------------------------------------


def _int(name: str, label: str, value: int, lo: int, hi: int, step: int = 1) -> Control:
    return Control(name, label, "int", value, lo, hi, step)


def _float(name: str, label: str, value: float, lo: float, hi: float, step: float) -> Control:
    return Control(name, label, "float", value, lo, hi, step)


def _choice(name: str, label: str, options: Any, value: Any) -> Control:
    pairs = tuple((str(o), o) if not isinstance(o, tuple) else o for o in options)
    return Control(name, label, "choice", value, options=pairs)


def _clock(sc: Any) -> Control:
    options = dict(CLOCKS)
    if sc.tick_s not in options.values():
        options[f"{sc.tick_s:g} s"] = sc.tick_s
    return _choice("tick_s", "clock", list(options.items()), sc.tick_s)


# --- the slot pool (chapters 1-5) -------------------------------------------------------------------


def _binned(series: Any, bin_s: int) -> list[float]:
    return [sum(series[i:i + bin_s]) / len(series[i:i + bin_s]) for i in range(0, len(series), bin_s)]


def _occupancy(r: Any, title: str | None = None, bin_s: int = 60) -> Chart:
    inter = _binned(r.day.busy_interactive, bin_s)
    batch = _binned(r.day.busy_batch, bin_s)
    x = tuple(i * bin_s / 3600 for i in range(len(inter)))
    slots = r.scenario.slots
    top = [i + b for i, b in zip(inter, batch)]
    return Chart(
        (
            Band(x, (0.0,) * len(x), tuple(inter), "interactive", COLORS["interactive"]),
            Band(x, tuple(inter), tuple(top), "batch", COLORS["batch"]),
            Band(x, tuple(top), tuple(max(t, float(slots)) for t in top), "free", COLORS["free"]),
            Rule(slots, "y", f"{slots} slots"),
        ),
        title=r.spec if title is None else title, xlabel="time (h)", ylabel="busy slots",
        xlim=(0, r.scenario.ticks / 3600), ylim=(0, slots * 1.08),
    )


def _summary(r: Any) -> dict[str, Any]:
    peak = r.window(r.scenario.ticks // 2 - 1800, r.scenario.ticks // 2 + 1800)
    return {
        "interactive p50 wait (s)": r.p50_s,
        "interactive p99 wait (s)": r.p99_s,
        "p99 wait in the peak hour (s)": peak["p99"],
        "waiting > 2 s": f"{r.late_fraction:.1%}",
        "batch jobs done": f"{r.batch_done:,}",
        "evictions": f"{r.preempted:,}",
        "slot use": f"{r.util:.0%}",
    }


@_explorer("littles")
def littles(hold_s: float = 8.0) -> Explorer:
    """Little's law and Poisson bursts: the peak rate (req/s), the mean slot time (s) and the clock."""
    from lanes.pool.engine import simulate
    from lanes.pool.littles import busy_slots, poisson_tail, rate_curve
    from lanes.pool.scenario import Scenario

    def compute(peak_rate: float, hold_s: int, tick_s: float) -> tuple[list[Chart], dict[str, Any]]:
        sc = Scenario(peak_rate=peak_rate, inter_service_s=(hold_s // 2, hold_s + hold_s // 2), backlog=0, tick_s=tick_s)
        r = simulate(sc, "priority")
        lo, hi = sc.inter_service_s
        hold = (lo + hi) / 2
        measured = _binned(r.day.busy_interactive, 300)
        rates = rate_curve(sc)
        predicted = [lam * hold for lam in _binned(rates, 300)]
        x = tuple(i * 300 / 3600 for i in range(len(measured)))
        chart = Chart(
            (Line(x, tuple(measured), "simulated busy interactive slots", COLORS["interactive"], width=2),
             Line(x, tuple(predicted), f"Little's law: rate x {hold:g} s", "#000000", dash=True)),
            xlabel="time (h)", ylabel="busy slots", xlim=(0, sc.ticks / 3600), ylim=(0, max(measured + predicted) * 1.05),
        )
        peak_l = busy_slots(peak_rate, hold_s)
        burst = int(peak_l) + 10
        rows = {
            "L at the peak (slots)": f"{peak_l:g}",
            "simulated mean busy (slots)": f"{r.day.mean_busy_interactive:.1f}",
            "Little's law mean (slots)": f"{busy_slots(sum(rates) / sc.ticks, hold_s):.1f}",
            f"P(busy >= {burst}) at the peak": f"{poisson_tail(peak_l, burst):.1%}",
            "interactive p99 wait (s)": r.p99_s,
        }
        return [chart], rows

    controls = (
        _float("peak_rate", "peak rate (req/s)", 5.0, 2.0, 7.0, 0.5),
        _int("hold_s", "mean slot time (s)", int(hold_s), 4, 16, 2),
        _clock(Scenario()),
    )
    return Explorer("littles", "Little's law: change the peak rate or the slot time", controls, compute)


@_explorer("policy")
def policy(scenario: Any = None) -> Explorer:
    """A policy of the anchor table and the clock: slot occupancy and p99 waits over the day."""
    from lanes.pool.engine import simulate
    from lanes.pool.policies import DEFAULT_POLICIES
    from lanes.pool.scenario import Scenario
    from lanes.pool.results import percentile

    sc = Scenario() if scenario is None else scenario

    def compute(policy: str, tick_s: float) -> tuple[list[Chart], dict[str, Any]]:
        r = simulate(sc.with_(tick_s=tick_s), policy)
        bin_s = 600
        groups: list[list[float]] = [[] for _ in range(-(-r.scenario.ticks // bin_s))]
        for w, a in zip(r.wait_s, r.day.wait_arrival_tick):
            groups[int(a) // bin_s].append(w)
        x, y = [], []
        for i, g in enumerate(groups):
            if g:
                g.sort()
                x.append((i * bin_s + bin_s / 2) / 3600)
                y.append(percentile(g, 0.99))
        log = policy == "fifo"
        waits = Chart((Line(tuple(x), tuple(max(v, 0.1) if log else v for v in y), r.spec),),
                      xlabel="arrival time (h)", ylabel="p99 wait (s)", ylog=log)
        return [_occupancy(r), waits], _summary(r)

    controls = (_choice("policy", "policy", list(DEFAULT_POLICIES), "priority"), _clock(sc))
    return Explorer("policy", "Strict priority against fifo: pick a policy", controls, compute)


@_explorer("headroom")
def headroom(scenario: Any = None) -> Explorer:
    """The headroom R (slots kept free of batch), the batch job length and the clock.

    The backlog grows as jobs shrink, so the batch work offered stays the same (chunking, not less work).
    """
    from lanes.pool.engine import simulate
    from lanes.pool.scenario import Scenario

    sc = Scenario() if scenario is None else scenario
    work = sc.backlog * sum(sc.batch_service_s) / 2

    def compute(reserve: int, batch: str, tick_s: float) -> tuple[list[Chart], dict[str, Any]]:
        rng = BATCH_DURATIONS[batch]
        chunked = sc.with_(batch_service_s=rng, backlog=round(work / (sum(rng) / 2)), tick_s=tick_s)
        r = simulate(chunked, f"reserve:{reserve}")
        rows = _summary(r)
        rows["batch slot-hours"] = f"{sum(r.day.busy_batch) / 3600:,.0f}"
        return [_occupancy(r)], rows

    controls = (
        _int("reserve", "headroom R (slots)", 8, 0, 32),
        _choice("batch", "batch job length", list(BATCH_DURATIONS), next(iter(BATCH_DURATIONS))),
        _clock(sc),
    )
    return Explorer("headroom", "Headroom: keep R slots free of batch", controls, compute)


@_explorer("preemption")
def preemption(scenario: Any = None) -> Explorer:
    """Eviction cost (s of work redone), headroom (0: pure preemption), victim order, minimum run (s), clock."""
    from lanes.pool.engine import simulate
    from lanes.pool.scenario import Scenario

    sc = Scenario() if scenario is None else scenario

    def compute(preempt_cost_s: int, reserve: int, victim: str, min_run_s: int, tick_s: float) -> tuple[list[Chart], dict[str, Any]]:
        pol = f"hybrid:{reserve}" if reserve else "preempt"
        r = simulate(sc.with_(preempt_cost_s=preempt_cost_s, tick_s=tick_s), pol, victim=victim, min_run_s=min_run_s)
        return [_occupancy(r, f"{r.spec}, eviction cost {preempt_cost_s} s")], _summary(r)

    controls = (
        _int("preempt_cost_s", "eviction cost (s)", sc.preempt_cost_s, 0, 120, 5),
        _int("reserve", "headroom R (slots)", 0, 0, 24),
        _choice("victim", "victim", ["youngest", "most_remaining"], "youngest"),
        _int("min_run_s", "minimum run (s)", 0, 0, 120, 10),
        _clock(sc),
    )
    return Explorer("preemption", "Preemption: what does each eviction cost?", controls, compute)


@_explorer("starvation")
def starvation(scenario: Any = None, deadline_s: int = 4 * 3600) -> Explorer:
    """Batch floor and aging against a deadline (s): batch completion next to interactive latency.

    The run without floor or aging is kept per policy and clock, so moving the floor runs one simulation.
    """
    from lanes.pool.engine import simulate
    from lanes.pool.scenario import Scenario

    sc = Scenario() if scenario is None else scenario
    plain = functools.lru_cache(maxsize=8)(lambda pol, tick_s: simulate(sc.with_(tick_s=tick_s), pol))

    def compute(policy: str, floor: int, aging: str, tick_s: float) -> tuple[list[Chart], dict[str, Any]]:
        base = plain(policy, tick_s)
        r = simulate(sc.with_(tick_s=tick_s), policy, floor=floor, aging_s=AGING_CHOICES[aging])
        lines = []
        for run, label in ((base, policy), (r, f"{policy}, floor {floor}, aging {aging}")):
            done = run.day.batch_done_cumulative[59::60]
            lines.append(Line(tuple((i + 1) / 60 for i in range(len(done))), tuple(float(d) for d in done), label))
        chart = Chart((*lines, Rule(deadline_s / 3600, "x", "deadline")), xlabel="time (h)", ylabel="batch jobs done")
        rows = _summary(r)
        rows[f"batch done by {deadline_s / 3600:g} h"] = f"{r.day.batch_done_by(deadline_s):,}"
        return [chart], rows

    controls = (
        _choice("policy", "policy", ["preempt", "hybrid:8"], "preempt"),
        _int("floor", "batch floor (slots)", 0, 0, 32, 4),
        _choice("aging", "aging", list(AGING_CHOICES), "off"),
        _clock(sc),
    )
    return Explorer("starvation", "Starvation: give batch a floor or let it age", controls, compute)


# --- the lane (chapter 6) -----------------------------------------------------------------------


@_explorer("lane")
def lane(scenario: Any = None) -> Explorer:
    """Queue limit, order and surge rate (req/s) of one lane: p50 latency over time and outcomes."""
    from lanes.lane.interactive import LanePolicy, LaneScenario, TenantLoad, simulate_lane

    base = scenario or LaneScenario(
        tenants=(TenantLoad("a", 6.0, surge_rate_per_s=12.0, surge_start_s=60, surge_end_s=180),), duration_s=300
    )

    def compute(max_queue: int, order: str, drop_expired: bool, surge: float) -> tuple[list[Chart], dict[str, Any]]:
        first, *rest = base.tenants
        sc = base.with_(tenants=(TenantLoad(first.name, first.rate_per_s, surge, first.surge_start_s, first.surge_end_s), *rest))
        timeout = 2.0 if order == "adaptive-lifo" else None
        pol = LanePolicy(max_queue=max_queue or None, order=order, drop_expired=drop_expired, queue_timeout_s=timeout)
        r = simulate_lane(sc, pol)
        bin_s = 10.0
        groups: dict[int, list[float]] = {}
        for x in r.records:
            if x.latency_s is not None:
                groups.setdefault(int(x.arrival_s // bin_s), []).append(x.latency_s)
        xs, ys = [], []
        for b in sorted(groups):
            lat = sorted(groups[b])
            xs.append(b * bin_s + bin_s / 2)
            ys.append(lat[min(len(lat) - 1, int(0.5 * len(lat)))])
        marks: list[Any] = []
        for t in sc.tenants:
            if t.surge_rate_per_s is not None and t.surge_end_s > t.surge_start_s:
                marks.append(Band((t.surge_start_s, t.surge_end_s), (1e-3, 1e-3), (1e4, 1e4), "surge", COLORS["surge"], 0.35))
                break
        marks += [Line(tuple(xs), tuple(ys), r.policy.name), Rule(sc.deadline_s, "y", "client deadline")]
        lo = min([*ys, sc.deadline_s]) if ys else sc.deadline_s
        hi = max([*ys, sc.deadline_s]) if ys else sc.deadline_s
        chart = Chart(tuple(marks), xlabel="arrival time (s)", ylabel="p50 latency (s)", ylog=True,
                      xlim=(0, sc.duration_s), ylim=(10 ** math.floor(math.log10(lo)), 10 ** math.ceil(math.log10(hi) + 1e-9)))
        s = r.summary()
        rows = {k: (f"{v:.2f}" if isinstance(v, float) else v) for k, v in s.items()}
        rows["capacity (req/s)"] = f"{sc.capacity_per_s:g}"
        return [chart], rows

    controls = (
        _int("max_queue", "max queue (0 = none)", 0, 0, 200, 5),
        _choice("order", "order", ["fifo", "adaptive-lifo"], "fifo"),
        Control("drop_expired", "drop expired", "toggle", False),
        _float("surge", "surge rate (req/s)", 12.0, 6.0, 20.0, 1.0),
    )
    return Explorer("lane", "One lane under a surge: move the queue limit, the order and the surge", controls, compute)


# --- the engine (chapters 7-10) ------------------------------------------------------------------


@_explorer("microbatch")
def microbatch(requests: int = 20, model_call_s: float = 0.05) -> Explorer:
    """Micro-batcher on the virtual clock: max_wait (ms), max_batch and the arrival spacing (ms)."""
    from lanes.gpu.batcher import simulate_batches

    def compute(max_wait_ms: int, max_batch: int, gap_ms: int) -> tuple[list[Chart], dict[str, Any]]:
        arrivals = [k * gap_ms / 1000 for k in range(requests)]
        r = simulate_batches(arrivals, max_batch=max_batch, max_wait_s=max_wait_ms / 1000, model_call_s=model_call_s)
        sizes = Chart((Bars(tuple(f"batch {k + 1}" for k in range(r.batches)), tuple(float(s) for s in r.batch_sizes),
                            tuple(str(s) for s in r.batch_sizes), f"max_wait {max_wait_ms} ms"),),
                      xlabel="requests in the batch (batches in order)")
        total = Chart((Bars((f"max_wait {max_wait_ms} ms",), (1e3 * r.total_s,), (f"{1e3 * r.total_s:.0f} ms",)),), xlabel="total time (ms)")
        return [sizes, total], {
            "batches": r.batches,
            "batch sizes": " ".join(map(str, r.batch_sizes)),
            "total time (ms)": f"{1e3 * r.total_s:.0f}",
            "mean latency (ms)": f"{1e3 * r.mean_latency_s:.0f}",
        }

    controls = (
        _int("max_wait_ms", "max_wait (ms)", 20, 0, 300, 10),
        _int("max_batch", "max_batch", 8, 1, 20),
        _int("gap_ms", "gap between arrivals (ms)", 0, 0, 50, 5),
    )
    return Explorer("microbatch", f"Micro-batcher, {requests} requests, {1e3 * model_call_s:g} ms per call", controls, compute)


@_explorer("littles_chain")
def littles_chain() -> Explorer:
    """Chains 1 and 2: rate, TTFT, output length and TPOT to requests in flight, KV and the naive ceiling."""
    from lanes.gpu import chains

    def compute(rate: float, ttft_ms: int, output_tokens: int, tpot_ms: int) -> tuple[list[Chart], dict[str, Any]]:
        ll = chains.littles_law(arrival_rate_per_s=rate, ttft_s=ttft_ms / 1e3, output_tokens=output_tokens, tpot_s=tpot_ms / 1e3)
        kv = chains.kv_in_flight(in_system=ll.in_system, w_s=ll.w_s)
        rates = [i * 0.5 for i in range(1, 101)]
        gb = []
        for q in rates:
            lq = chains.littles_law(arrival_rate_per_s=q, ttft_s=ttft_ms / 1e3, output_tokens=output_tokens, tpot_s=tpot_ms / 1e3)
            gb.append(chains.kv_in_flight(in_system=lq.in_system, w_s=lq.w_s).kv_bytes / 1e9)
        pool_gb = inspect.signature(chains.kv_in_flight).parameters["pool_bytes"].default / 1e9  # the pool kv_in_flight assumes
        chart = Chart(
            (Line(tuple(rates), tuple(gb), "KV in flight, W held fixed", COLORS["interactive"], width=2),
             Rule(pool_gb, "y", f"KV pool {pool_gb:.1f} GB"),
             Rule(kv.ceiling_rps, "x", f"naive ceiling {kv.ceiling_rps:.0f} req/s", "#808080"),
             Line((rate,), (kv.kv_bytes / 1e9,), "this setting", "#000000", points=True)),
            xlabel="arrival rate (requests/s)", ylabel="KV cache in flight (GB)", ylim=(0, max(max(gb), pool_gb) * 1.1),
        )
        rows = {
            "W (s)": f"{ll.w_s:.3f}",
            "L, requests in system": f"{ll.in_system:.2f}",
            "sequences decoding": f"{ll.decoding:.2f}",
            "tokens/s": f"{ll.tokens_per_s:,.0f}",
            "KV in flight (GB)": f"{kv.kv_bytes / 1e9:.1f}",
            "naive ceiling (req/s)": f"{kv.ceiling_rps:.1f}",
        }
        return [chart], rows

    controls = (
        _float("rate", "requests/s", 10.0, 1.0, 40.0, 1.0),
        _int("ttft_ms", "TTFT (ms)", 500, 100, 2000, 100),
        _int("output_tokens", "output tokens", 300, 50, 1000, 50),
        _int("tpot_ms", "TPOT (ms)", 25, 5, 60, 1),
    )
    return Explorer("littles_chain", "Little's law and KV in flight: change the request shape", controls, compute)


@_explorer("goodput")
def goodput() -> Explorer:
    """Chain 3: context length, TPOT target (ms) and accelerator to the goodput cliff."""
    from lanes.gpu import chains
    from lanes.gpu.hardware import HARDWARE

    def compute(context_tokens: int, target_ms: int, hardware: str) -> tuple[list[Chart], dict[str, Any]]:
        g = chains.goodput(context_tokens=context_tokens, tpot_target_s=target_ms / 1e3, hardware=hardware)
        xs = tuple(range(1, 257))
        pts = [chains.goodput(batch_small=b, batch_large=b, context_tokens=context_tokens, tpot_target_s=target_ms / 1e3, hardware=hardware)
               for b in xs]
        tpot = Chart((Line(xs, tuple(p.tpot_small_s * 1e3 for p in pts), "TPOT", "#000000", width=2),
                      Rule(target_ms, "y", f"target {target_ms:g} ms")),
                     xlabel="batch size (sequences)", ylabel="TPOT (ms)")
        tput = Chart((Line(xs, tuple(p.tokens_per_s_small for p in pts), "throughput", COLORS["batch"], width=2),
                      Line(xs, tuple(p.goodput_small_tokens_per_s for p in pts), "goodput", COLORS["interactive"], width=2)),
                     xlabel="batch size (sequences)", ylabel="tokens/s", ylim=(0, max(p.tokens_per_s_small for p in pts) * 1.1))
        rows = {
            "TPOT at 64 (ms)": f"{g.tpot_small_s * 1e3:.1f}",
            "tok/s at 64": f"{g.tokens_per_s_small:,.0f}",
            "TPOT at 128 (ms)": f"{g.tpot_large_s * 1e3:.1f}",
            "tok/s at 128": f"{g.tokens_per_s_large:,.0f}",
            "goodput at 128 (tok/s)": f"{g.goodput_large_tokens_per_s:,.0f}",
            "largest batch meeting target": g.max_batch_at_target,
        }
        return [tpot, tput], rows

    controls = (
        _int("context_tokens", "context (tokens)", 2048, 512, 16384, 512),
        _int("target_ms", "TPOT target (ms)", 10, 6, 40, 1),
        _choice("hardware", "GPU", list(HARDWARE), "h100-sxm"),
    )
    return Explorer("goodput", "Goodput at a TPOT target: change the context, the target, the GPU", controls, compute)


@_explorer("swap")
def swap() -> Explorer:
    """Chain 4: context, copy bandwidth (GB/s) and MFU to swap against recompute."""
    from lanes.gpu import chains

    def compute(context_tokens: int, link_gbps: float, mfu: float) -> tuple[list[Chart], dict[str, Any]]:
        r = chains.swap_vs_recompute(context_tokens=context_tokens, link_bytes_per_s=link_gbps * 1e9, mfu=mfu)
        bws = (0.5, 1, 2, 3, 5, 8, 12, 20, 35, 50, 75, 100, 150)
        curve = [chains.swap_vs_recompute(context_tokens=context_tokens, link_bytes_per_s=b * 1e9, mfu=mfu) for b in bws]
        us = [c.swap_s_per_token * 1e6 for c in curve] + [r.recompute_s_per_token * 1e6, r.swap_s_per_token * 1e6]
        lo = 10 ** math.floor(math.log10(min(us)))
        hi = 10 ** math.ceil(math.log10(max(us)) + 1e-9)
        chart = Chart(
            (Band((3.0, 4.0), (lo, lo), (hi, hi), "per-block 32 KiB copies", COLORS["free"], 0.6),
             Line(tuple(float(b) for b in bws), tuple(c.swap_s_per_token * 1e6 for c in curve), "swap out and back", COLORS["batch"], width=2),
             Rule(r.recompute_s_per_token * 1e6, "y", "recompute", COLORS["interactive"], dash=False),
             Rule(r.break_even_bytes_per_s / 1e9, "x", f"break-even {r.break_even_bytes_per_s / 1e9:.1f} GB/s", "#808080"),
             Line((link_gbps,), (r.swap_s_per_token * 1e6,), "this setting", "#000000", points=True)),
            xlabel="effective copy bandwidth (GB/s)", ylabel="time per token (us)", xlog=True, ylog=True,
            xlim=(0.1, 1000.0), ylim=(lo, hi),
        )
        rows = {
            "swap (us/token)": f"{r.swap_s_per_token * 1e6:.1f}",
            "recompute (us/token)": f"{r.recompute_s_per_token * 1e6:.1f}",
            "break-even (GB/s)": f"{r.break_even_bytes_per_s / 1e9:.1f}",
            "cheaper": "swap" if r.swap_s_per_token < r.recompute_s_per_token else "recompute",
        }
        return [chart], rows

    controls = (
        _int("context_tokens", "context (tokens)", 4096, 512, 32768, 512),
        _float("link_gbps", "copy bandwidth (GB/s)", 50.0, 1.0, 100.0, 0.5),
        _float("mfu", "MFU", 0.5, 0.1, 1.0, 0.05),
    )
    return Explorer("swap", "Swap or recompute: change the context, the copy bandwidth, the MFU", controls, compute)


@_explorer("hol")
def hol() -> Explorer:
    """Chain 5: a long prompt ahead of short ones, FCFS against by-length, on the step simulator."""
    from lanes.gpu import chains
    from lanes.gpu.steps import Request, simulate

    def compute(long_prompt_tokens: int, short_prompts: int, budget_tokens: int) -> tuple[list[Chart], dict[str, Any]]:
        h = chains.hol_blocking(long_prompt_tokens=long_prompt_tokens, short_prompts=short_prompts, budget_tokens=budget_tokens)
        reqs = [Request(long_prompt_tokens)] + [Request(500)] * short_prompts
        runs = {o: simulate(reqs, order=o, budget_tokens=budget_tokens) for o in ("fcfs", "by-length")}
        marks = []
        for k, (label, run) in enumerate(runs.items()):
            first = [t + a for t, a in zip(run.ttft_s, run.arrival_s)]
            marks.append(Line(tuple(first[1:]), tuple(float(k + 1) for _ in first[1:]), f"{label}: short prompts' first tokens",
                              svg.PALETTE[2 * k], points=True))
            marks.append(Line((first[0],), (float(k + 1),), f"{label}: the long prompt's", svg.PALETTE[2 * k + 1], points=True))
        chart = Chart(tuple(marks), xlabel="time of the first token (s)", ylabel="1: FCFS, 2: by length", ylim=(0.5, 2.5))
        rows = {
            "full steps ahead of the short prompts": h.steps_ahead,
            "short TTFT, FCFS (s)": f"{h.short_ttft_fcfs_s:.2f}",
            "short TTFT, by length (s)": f"{h.short_ttft_by_length_s:.2f}",
            "long prompt's extra wait (s)": f"{h.long_delay_s:.2f}",
            "mean TTFT, FCFS -> by length (s)": f"{h.mean_ttft_fcfs_s:.2f} -> {h.mean_ttft_by_length_s:.2f}",
        }
        return [chart], rows

    controls = (
        _int("long_prompt_tokens", "long prompt (tokens)", 32768, 4096, 65536, 4096),
        _int("short_prompts", "short prompts", 10, 1, 30, 1),
        _int("budget_tokens", "token budget", 8192, 1024, 16384, 1024),
    )
    return Explorer("hol", "Head-of-line blocking: change the long prompt, the short ones, the budget", controls, compute)


@_explorer("knee")
def knee() -> Explorer:
    """Chain 6: mean prefill time (ms), target (s) and percentile to the utilisation knee (M/M/1)."""
    from lanes.gpu import chains
    from lanes.lane.queueing import mm1_response_quantile_s

    def compute(service_ms: float, target_s: float, percentile: float) -> tuple[list[Chart], dict[str, Any]]:
        k = chains.p99_knee(service_s=service_ms / 1e3, p99_target_s=target_s, percentile=percentile)
        rhos = [i / 200 for i in range(0, 191)]
        curve = [mm1_response_quantile_s(service_ms / 1e3, r, percentile) for r in rhos]
        factor = curve[0] / (service_ms / 1e3)
        chart = Chart(
            (Line(tuple(rhos), tuple(curve), f"M/M/1: {factor:.1f} S / (1 - rho)", "#000000", width=2),
             Rule(target_s, "y", f"target {target_s:g} s", "#808080"),
             Rule(k.rho_max, "x", f"highest utilisation {k.rho_max:.2f}", "#808080")),
            xlabel="utilisation rho", ylabel=f"p{percentile * 100:g} response time (s)", xlim=(0, 1), ylim=(0, target_s * 3),
        )
        rows = {
            "percentile factor": f"{k.p99_factor:.2f}",
            "highest utilisation": f"{k.rho_max:.2f}",
            "highest rate (req/s)": f"{k.max_rate_per_s:.1f}",
            "slope at 70%": f"{k.slope_high_load:.1f}",
            "slope at 50%": f"{k.slope_low_load:.1f}",
        }
        return [chart], rows

    controls = (
        _float("service_ms", "mean prefill S (ms)", 66.5, 10.0, 200.0, 0.5),
        _float("target_s", "target (s)", 1.0, 0.2, 3.0, 0.1),
        _choice("percentile", "percentile", [0.9, 0.95, 0.99, 0.999], 0.99),
    )
    return Explorer("knee", "The tail-latency knee: change S, the target, the percentile", controls, compute)


@_explorer("long_prompt")
def long_prompt() -> Explorer:
    """Chain 7: prompt length, decoders and budget to chunks and the decoders' inter-token latency."""
    from lanes.gpu import chains
    from lanes.gpu.steps import Request, simulate

    def compute(prompt_tokens: int, decoders: int, budget_tokens: int) -> tuple[list[Chart], dict[str, Any]]:
        lp = chains.long_prompt(prompt_tokens=prompt_tokens, decoders=decoders, budget_tokens=budget_tokens)
        run = simulate([Request(prompt_tokens)], budget_tokens=budget_tokens, decoders=decoders, decoder_context_tokens=2048)
        itl = [d * 1e3 for d in run.itl_s]
        chart = Chart(
            (Line(tuple(float(i) for i in range(1, len(itl) + 1)), tuple(itl), f"budget {budget_tokens:,}", width=1.5),
             Rule(lp.itl_before_s * 1e3, "y", "ITL before the prompt", "#808080")),
            xlabel="decode step", ylabel="inter-token latency (ms)", ylog=True,
        )
        rows = {
            "chunks": lp.chunks,
            "chunk 1 (ms)": f"{lp.chunk1_s * 1e3:.0f}",
            "each later chunk adds (ms)": f"{lp.later_chunk_increment_s * 1e3:.0f}",
            "ITL before (ms)": f"{lp.itl_before_s * 1e3:.1f}",
            "worst ITL (ms)": f"{lp.itl_max_s * 1e3:.0f}",
            "TTFT of the long prompt (s)": f"{lp.ttft_s:.2f}",
        }
        return [chart], rows

    controls = (
        _int("prompt_tokens", "prompt (tokens)", 100_000, 10_000, 200_000, 10_000),
        _int("decoders", "decoders", 64, 1, 256, 1),
        _int("budget_tokens", "token budget", 8192, 1024, 16384, 1024),
    )
    return Explorer("long_prompt", "A long prompt under the budget: change its length, the decoders, the budget", controls, compute)


@_explorer("tenant")
def tenant() -> Explorer:
    """Chain 8: tenant B's request shape and the output weight to costs and shares."""
    from lanes.gpu import chains
    from lanes.gpu.fairness import Tenant, schedule

    def compute(b_input_tokens: int, b_output_tokens: int, output_weight: float) -> tuple[list[Chart], dict[str, Any]]:
        c = chains.tenant_cost(b_input_tokens=b_input_tokens, b_output_tokens=b_output_tokens, output_weight=output_weight)
        tenants = [Tenant("A", 200, 100), Tenant("B", b_input_tokens, b_output_tokens)]
        res = [schedule(tenants, policy=p, output_weight=output_weight) for p in ("round-robin", "token-fair")]
        cats, vals = [], []
        for r in res:
            for name, share in r.shares.items():
                cats.append(f"{r.policy}: {name}")
                vals.append(float(share))
        chart = Chart((Bars(tuple(cats), tuple(vals), tuple(f"{v:.0%}" for v in vals)),), xlabel="share of weighted tokens")
        rows = {
            "cost A (weighted tokens)": f"{c.cost_a:,.0f}",
            "cost B (weighted tokens)": f"{c.cost_b:,.0f}",
            "B / A": f"{c.ratio:.1f}x",
            "B's share, round-robin": f"{c.round_robin_share_b:.0%}",
            "B's share, token-fair": f"{c.fair_share_b:.0%}",
        }
        return [chart], rows

    controls = (
        _int("b_input_tokens", "B input tokens", 8000, 200, 32000, 200),
        _int("b_output_tokens", "B output tokens", 1000, 50, 4000, 50),
        _float("output_weight", "output weight", 3.0, 1.0, 6.0, 0.5),
    )
    return Explorer("tenant", "Tenant cost: change tenant B's requests and the output weight", controls, compute)


@_explorer("kv_headroom")
def kv_headroom(scenario: Any = None) -> Explorer:
    """Where it breaks: headroom counted in sequence slots, in KV tokens, or both."""
    from lanes.gpu.kvpool import KvScenario, simulate_kv_pool

    sc = KvScenario() if scenario is None else scenario

    def compute(batch: str, keep_slots: int, keep_tokens: int) -> tuple[list[Chart], dict[str, Any]]:
        r = simulate_kv_pool(sc.with_(batch_tokens=BATCH_CONTEXTS[batch]), f"slots:{keep_slots}+tokens:{keep_tokens}")
        bin_s = 30
        chat = _binned(r.chat_blocks, bin_s)
        batch_b = _binned(r.batch_blocks, bin_s)
        x = tuple((i * bin_s + bin_s / 2) / 60 for i in range(len(chat)))
        top = tuple(a + b for a, b in zip(chat, batch_b))
        pool = r.scenario.pool_blocks
        chart = Chart(
            (Band(x, (0.0,) * len(x), tuple(chat), "chats", COLORS["interactive"]),
             Band(x, tuple(chat), top, "batch", COLORS["batch"]),
             Rule(pool, "y", "pool")),
            title=f"{r.rule}: chat p99 wait {r.p99_wait_s} s", xlabel="time (min)", ylabel="KV blocks held", ylim=(0, pool * 1.1),
        )
        rows = {
            "chat p99 wait (s)": r.p99_wait_s,
            "chats waiting > 2 s": f"{r.late_fraction:.1%}",
            "batch sequences done": r.batch_done,
            "KV in use": f"{r.mean_kv_used:.0%}",
            "running sequences (mean)": f"{r.mean_sequences:.1f}",
            "decode step (ms, mean)": f"{r.mean_step_s * 1e3:.1f}",
        }
        return [chart], rows

    controls = (
        _choice("batch", "batch context", list(BATCH_CONTEXTS), "32K"),
        _int("keep_slots", "keep slots free", 16, 0, 48, 4),
        _int("keep_tokens", "keep KV tokens free", 0, 0, 200_000, 10_000),
    )
    return Explorer("kv_headroom", "Headroom in slots or in KV: change the batch context and the reserves", controls, compute)


@_explorer("preemption_cost")
def preemption_cost(scenario: Any = None) -> Explorer:
    """Where it breaks: what one eviction costs three ways, fed to the slot pool's preempting policy."""
    from lanes.gpu.kvpool import preemption_costs
    from lanes.pool.engine import simulate
    from lanes.pool.scenario import Scenario

    sc = Scenario(hours=2) if scenario is None else scenario

    def compute(context_k: int, scattered_gbps: float, checkpoint_s: int) -> tuple[list[Chart], dict[str, Any]]:
        pc = preemption_costs(context_k * 1024, scattered_bytes_per_s=scattered_gbps * 1e9, checkpoint_interval_s=checkpoint_s)
        costs = pc.as_slot_costs(slots=sc.slots)
        done = {k: simulate(sc.with_(preempt_cost_s=c), "preempt").batch_done for k, c in costs.items()}
        chart = Chart((Bars(tuple(costs), tuple(float(v) for v in done.values()), tuple(f"{costs[k]} slot-s" for k in done),
                            color=COLORS["batch"]),), xlabel="batch jobs done under 'preempt'")
        rows = {f"{k} (slot-s per eviction)": v for k, v in costs.items()}
        return [chart], rows

    controls = (
        _int("context_k", "context (K tokens)", 128, 4, 256, 4),
        _float("scattered_gbps", "scattered copy GB/s", 3.5, 1.0, 50.0, 0.5),
        _int("checkpoint_s", "checkpoint interval (s)", 60, 0, 300, 10),
    )
    return Explorer("preemption_cost", "What an eviction costs: change the context, the copies, the checkpoints", controls, compute)


#: The explorer each title belongs to (the book's fallback markers name explorers by title).
def by_title() -> dict[str, str]:
    """Title -> explorer name, for every explorer made with its default arguments."""
    return {EXPLORERS[n]().title: n for n in EXPLORERS}


# --- JupyterLab's drawing -----------------------------------------------------------------------------


def to_matplotlib(chart: Chart, ax: Any) -> Any:
    """Draw ``chart`` on the matplotlib Axes ``ax`` (the Lab explorers' figure); returns ``ax``."""
    _checks.instance("chart", chart, Chart)
    palette = iter(svg.PALETTE)
    for m in chart.marks:
        if isinstance(m, Band):
            ax.fill_between(m.x, m.lo, m.hi, color=m.color or next(palette), alpha=m.opacity, lw=0, label=m.label or None)
        elif isinstance(m, Line):
            color = m.color or next(palette)
            ys = [float("nan") if v is None else v for v in m.y]
            if m.points:
                ax.plot(m.x, ys, "o", color=color, label=m.label or None)
            else:
                ax.plot(m.x, ys, color=color, lw=m.width, ls="--" if m.dash else "-", label=m.label or None)
        elif isinstance(m, Bars):
            color = m.color or next(palette)
            ys = list(range(len(m.categories)))
            ax.barh(ys, m.values, color=color, label=m.label or None)
            for y, v, note in zip(ys, m.values, m.notes):
                ax.text(v, y, f" {note}", va="center")
            ax.set_yticks(ys, list(m.categories))
            ax.invert_yaxis()
        elif isinstance(m, Rule):
            draw = ax.axvline if m.axis == "x" else ax.axhline
            draw(m.value, color=m.color, ls="--" if m.dash else "-", lw=1.2, label=m.label or None)
    if chart.xlog:
        ax.set_xscale("log")
    if chart.ylog:
        ax.set_yscale("log")
    if chart.xlim:
        ax.set_xlim(*chart.xlim)
    if chart.ylim:
        ax.set_ylim(*chart.ylim)
    ax.set_xlabel(chart.xlabel)
    ax.set_ylabel(chart.ylabel)
    if chart.title:
        ax.set_title(chart.title)
    if any(getattr(m, "label", "") for m in chart.marks):
        ax.legend()
    return ax
