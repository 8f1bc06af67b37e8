"""Request traces: real arrival times and token counts, loaded from CSV files.

A trace is a list of requests, each with an arrival time and the numbers of
prompt and output tokens it brought.  The package ships two one-hour samples
of production LLM traffic in Azure (November 2023), by name:

``conv``
    a conversation service: 19,366 requests over 3,502 s (5.53 per second);
``code``
    a coding assistant: 8,819 requests over 3,436 s (2.57 per second), short outputs.

They are published by Microsoft in the Azure Public Dataset under CC BY 4.0
(the licence text ships beside them in ``lanes/data/traces/``).  Credit:
Patel et al., "Splitwise: Efficient generative LLM inference using phase
splitting", ISCA 2024, and the Azure Public Dataset,
github.com/Azure/AzurePublicDataset.

Two file layouts are read (plain or gzip-compressed, header line first,
columns in any order, extra columns ignored):

* the Azure layout ``TIMESTAMP,ContextTokens,GeneratedTokens``, with
  timestamps such as ``2023-11-16 18:15:46.6805900``;
* the re-based layout ``arrival_s,prompt_tokens,output_tokens``, arrival
  seconds from any origin (Vidur's names ``arrived_at,num_prefill_tokens,
  num_decode_tokens`` are accepted too).

Arrivals are re-based so that the first request arrives at 0 s and sorted
(ties keep file order).  The file is read line by line, so a file of
millions of lines needs memory for the numbers only; the first malformed
line stops the load with one ``ValueError`` naming the file, the line and
the field.

Replaying a trace through the slot pool needs a hold time per request (the
seconds it keeps its slot).  This part of the package knows nothing of the
engine: :func:`trace_stream` takes the hold times as plain numbers, and
:func:`lanes.gpu.replay.hold_times_s` computes them from a step-time
profile.
"""

from __future__ import annotations

import gzip
import math
import os
import random
import re
from bisect import bisect_left
from collections import Counter
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Iterable, Sequence

from .. import _checks
from .._stats import percentile
from .arrivals import ArrivalStream
from .scenario import MAX_SERVICE_S, Scenario

#: Folder of the shipped traces, their licence and their description.
DATA_DIR = Path(__file__).resolve().parents[1] / "data" / "traces"

#: Shipped traces by name: the file in :data:`DATA_DIR`.
SHIPPED = {
    "conv": "AzureLLMInferenceTrace_conv.csv.gz",
    "code": "AzureLLMInferenceTrace_code.csv.gz",
}

#: The credit the licence asks for, wherever the data or figures from it appear.
ATTRIBUTION = (
    "Azure LLM inference traces 2023 (Azure Public Dataset, github.com/Azure/AzurePublicDataset), "
    "CC BY 4.0; Patel et al., \"Splitwise: Efficient generative LLM inference using phase splitting\", "
    "ISCA 2024."
)

#: Header names of each layout: (arrival, prompt tokens, output tokens).
AZURE_COLUMNS = ("TIMESTAMP", "ContextTokens", "GeneratedTokens")
REBASED_COLUMNS = ("arrival_s", "prompt_tokens", "output_tokens")
VIDUR_COLUMNS = ("arrived_at", "num_prefill_tokens", "num_decode_tokens")
_LAYOUTS = {"azure": AZURE_COLUMNS, "rebased": REBASED_COLUMNS, "vidur": VIDUR_COLUMNS}

#: Most bins :meth:`Trace.counts` and :meth:`Trace.dispersion` make, and most
#: blocks :meth:`Trace.resample` cuts (a smaller ``bin_s`` or ``block_s`` is refused).
MAX_BINS = 10_000_000

_STAMP = re.compile(r"(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d(?:\.\d+)?)")
_INT = re.compile(r"\d+")


@dataclass(frozen=True)
class Trace:
    """Requests with real arrival times and token counts.

    Attributes
    ----------
    name : str
        Where the trace came from (a shipped name, a path, and any window,
        scaling or resample applied).
    arrival_s : tuple of float
        Arrival of each request, seconds from the first one, non-decreasing.
    prompt_tokens : tuple of int
        Prompt (context) tokens of each request (>= 1).
    output_tokens : tuple of int
        Generated tokens of each request (>= 1).
    """

    name: str
    arrival_s: tuple[float, ...]
    prompt_tokens: tuple[int, ...]
    output_tokens: tuple[int, ...]

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "name", _checks.text("name", self.name))
        set_(self, "arrival_s", _arrivals(self.arrival_s))
        set_(self, "prompt_tokens", _tokens("prompt_tokens", self.prompt_tokens))
        set_(self, "output_tokens", _tokens("output_tokens", self.output_tokens))
        n = len(self.arrival_s)
        if len(self.prompt_tokens) != n or len(self.output_tokens) != n:
            raise ValueError(
                "arrival_s, prompt_tokens and output_tokens must have one entry per request "
                f"(got {n}, {len(self.prompt_tokens)}, {len(self.output_tokens)})"
            )
        if n == 0:
            raise ValueError("a trace must hold at least one request (got 0)")

    # --- size and rate ----------------------------------------------------------------
    @property
    def n_requests(self) -> int:
        """Requests in the trace."""
        return len(self.arrival_s)

    @property
    def span_s(self) -> float:
        """Seconds from the first arrival to the last."""
        return self.arrival_s[-1] - self.arrival_s[0]

    @property
    def rate_per_s(self) -> float:
        """Mean arrival rate: requests divided by the span, per second (0 for a one-instant trace)."""
        return self.n_requests / self.span_s if self.span_s > 0 else 0.0

    def summary(self) -> dict:
        """Requests, span, mean rate and token quantiles (nearest rank ``sorted[int(q * n)]``).

        Keys: ``name``, ``requests``, ``span_s``, ``rate_per_s``, and for
        ``prompt`` and ``output`` tokens ``_p50``, ``_p99`` and ``_max``.
        """
        out: dict = {
            "name": self.name,
            "requests": self.n_requests,
            "span_s": self.span_s,
            "rate_per_s": self.rate_per_s,
        }
        for label, values in (("prompt", self.prompt_tokens), ("output", self.output_tokens)):
            s = sorted(values)
            out[f"{label}_p50"] = percentile(s, 0.5)
            out[f"{label}_p99"] = percentile(s, 0.99)
            out[f"{label}_max"] = s[-1]
        return out

    # --- arrivals counted ---------------------------------------------------------------
    def counts(self, bin_s: float = 1.0) -> list[int]:
        """Arrivals in each bin of ``bin_s`` seconds, from 0 to the last arrival (whole bins)."""
        bin_s = self._bin("bin_s", bin_s)
        n_bins = int(self.arrival_s[-1] // bin_s) + 1
        out = [0] * n_bins
        for b, k in Counter(int(t // bin_s) for t in self.arrival_s).items():
            out[b] = k
        return out

    def dispersion(self, bin_s: float = 1.0) -> float:
        """Variance-to-mean ratio of the arrivals per bin (1 for a Poisson stream).

        Only whole bins count: the last, partial bin is dropped.
        """
        bin_s = self._bin("bin_s", bin_s)
        whole = int(self.span_s // bin_s)
        if whole < 2:
            raise ValueError(f"bin_s must leave at least two whole bins in the trace (got {bin_s:g} s "
                             f"for a span of {self.span_s:g} s)")
        c = self.counts(bin_s)[:whole]
        mean = sum(c) / whole
        var = sum((x - mean) ** 2 for x in c) / (whole - 1)
        return var / mean if mean else math.nan

    def _bin(self, name: str, width_s: object) -> float:
        """A bin or block width, seconds: > 0, and at most :data:`MAX_BINS` of them over the trace."""
        width = _checks.number(name, width_s, lo=0, lo_open=True)
        if self.arrival_s[-1] / width >= MAX_BINS:
            raise ValueError(f"{name} must cut the trace into at most {MAX_BINS} pieces: at least "
                             f"{_checks.bound(self.arrival_s[-1] / (MAX_BINS - 1))} s here (got {_checks.show(width_s)})")
        return width

    # --- copies for variants ------------------------------------------------------------
    def window(self, start_s: float, end_s: float) -> "Trace":
        """The requests arriving in ``[start_s, end_s)``, re-based to start at 0 s.

        Parameters are seconds from the trace's first arrival.
        """
        start = _checks.number("start_s", start_s, lo=0)
        end = _checks.number("end_s", end_s, lo=start, lo_open=True)
        i, j = bisect_left(self.arrival_s, start), bisect_left(self.arrival_s, end)
        if i == j:
            raise ValueError(f"window [{start:g}, {end:g}) s holds no request of {self.name}")
        t0 = self.arrival_s[i]
        return Trace(
            f"{self.name}[{start:g}:{end:g}]",
            tuple(t - t0 for t in self.arrival_s[i:j]),
            self.prompt_tokens[i:j],
            self.output_tokens[i:j],
        )

    def scaled(self, rate_factor: float) -> "Trace":
        """The same requests played ``rate_factor`` times as fast (arrival times divided by it).

        ``rate_factor`` 2 gives twice the mean rate in half the span; 0.5 a
        slower copy.  Token counts are unchanged.
        """
        f = _checks.number("rate_factor", rate_factor, lo=0, lo_open=True, hi=1000)
        return Trace(
            f"{self.name}x{f:g}",
            tuple(t / f for t in self.arrival_s),
            self.prompt_tokens,
            self.output_tokens,
        )

    def resample(self, seed: int, block_s: float = 60.0) -> "Trace":
        """A bootstrap copy: blocks of ``block_s`` seconds drawn with replacement.

        The span is cut into ``ceil(span / block_s)`` blocks; block k of the
        copy is a block of the original chosen at random (``random.Random(seed)``),
        its requests moved to block k's place.  Bursts shorter than a block
        and the token counts keep their real shape; which minutes are busy
        changes from copy to copy.
        """
        seed = _checks.integer("seed", seed)
        block = self._bin("block_s", block_s)
        n_blocks = max(1, math.ceil(self.span_s / block))
        starts = [bisect_left(self.arrival_s, b * block) for b in range(n_blocks + 1)]
        starts[-1] = self.n_requests
        rng = random.Random(seed)
        t, p, o = [], [], []
        for k in range(n_blocks):
            j = rng.randrange(n_blocks)
            lo, hi = starts[j], starts[j + 1]
            shift = (k - j) * block
            t += [x + shift for x in self.arrival_s[lo:hi]]
            p += self.prompt_tokens[lo:hi]
            o += self.output_tokens[lo:hi]
        if not t:
            raise ValueError(f"resample of {self.name} with seed {seed} drew only empty blocks")
        t0 = t[0]
        return Trace(f"{self.name}~{seed}", tuple(x - t0 for x in t), tuple(p), tuple(o))

    def as_poisson(self, seed: int) -> "Trace":
        """The same requests at Poisson arrival times of the same mean rate.

        A Poisson stream, given how many arrivals fall in a window, places them
        independently and uniformly in it; so this copy keeps the request count,
        the span and every request's tokens (in their order) and draws the
        arrival times as sorted uniform numbers over the span
        (``random.Random(seed)``).  Only the burstiness is gone.
        """
        seed = _checks.integer("seed", seed)
        rng = random.Random(seed)
        span = self.span_s
        inner = sorted(rng.random() * span for _ in range(self.n_requests - 2))
        times = (0.0, *inner, span) if self.n_requests > 1 else (0.0,)
        return Trace(f"{self.name}:poisson~{seed}", tuple(times), self.prompt_tokens, self.output_tokens)

    # --- tables -------------------------------------------------------------------------
    def to_frame(self):
        """The requests as a pandas DataFrame (``arrival_s``, ``prompt_tokens``, ``output_tokens``).

        pandas is imported here, not when the trace is loaded.
        """
        import pandas as pd

        return pd.DataFrame(
            {"arrival_s": self.arrival_s, "prompt_tokens": self.prompt_tokens, "output_tokens": self.output_tokens}
        )


# --- loading ----------------------------------------------------------------------------


def resolve(name_or_path: str | Path) -> Path:
    """The file of a shipped trace name (``conv``, ``code``) or an existing path."""
    if isinstance(name_or_path, str) and name_or_path in SHIPPED:
        return DATA_DIR / SHIPPED[name_or_path]
    if not isinstance(name_or_path, (str, os.PathLike)):
        raise ValueError(f"trace must be one of {', '.join(SHIPPED)} or a path to a CSV file "
                         f"(got {_checks.show(name_or_path)})")
    path = Path(name_or_path)
    try:
        found = path.is_file()
    except (OSError, ValueError):  # a name too long, a NUL byte
        found = False
    if not found:
        raise ValueError(
            f"trace must be one of {', '.join(SHIPPED)} or a path to a CSV file (got {_checks.show(str(name_or_path))})"
        )
    return path


def load_trace(name_or_path: str | Path) -> Trace:
    """Load a shipped trace by name (``"conv"``, ``"code"``) or a trace file by path.

    See the module docstring for the layouts read.  Raises ``ValueError`` for
    an unknown name, a missing file, an unknown header, or the first line
    with a missing or malformed field (naming the line number and the field).
    """
    path = resolve(name_or_path)
    label = name_or_path if isinstance(name_or_path, str) and name_or_path in SHIPPED else str(path)
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8", newline="") as f:
            times, prompts, outputs = _read(f, str(path))
    except (OSError, EOFError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path}: cannot be read as a text CSV file ({exc})") from None
    return _from_columns(label, times, prompts, outputs)


def trace_from_requests(
    arrival_s: Iterable[float], prompt_tokens: Iterable[int], output_tokens: Iterable[int], *, name: str = "requests"
) -> Trace:
    """A trace from three columns of numbers (validated, sorted, re-based to 0 s)."""
    times = [_checks.number("arrival_s", t, lo=0) for t in _checks.sequence("arrival_s", arrival_s, what="seconds")]
    prompts = [_checks.integer("prompt_tokens", p, lo=1)
               for p in _checks.sequence("prompt_tokens", prompt_tokens, what="token counts")]
    outputs = [_checks.integer("output_tokens", o, lo=1)
               for o in _checks.sequence("output_tokens", output_tokens, what="token counts")]
    if not len(times) == len(prompts) == len(outputs):
        raise ValueError("arrival_s, prompt_tokens and output_tokens must have one entry per request "
                         f"(got {len(times)}, {len(prompts)}, {len(outputs)})")
    return _from_columns(_checks.text("name", name), times, prompts, outputs)


def _from_columns(name: str, times: list[float], prompts: list[int], outputs: list[int]) -> Trace:
    if not times:
        raise ValueError(f"{name}: the trace holds no request (a header line and nothing else)")
    if any(b < a for a, b in zip(times, times[1:])):
        order = sorted(range(len(times)), key=times.__getitem__)  # stable: ties keep file order
        times = [times[i] for i in order]
        prompts = [prompts[i] for i in order]
        outputs = [outputs[i] for i in order]
    t0 = times[0]
    return Trace(name, tuple(t - t0 for t in times), tuple(prompts), tuple(outputs))


def _read(lines, where: str) -> tuple[list[float], list[int], list[int]]:
    """Parse the header and every data line; the first bad line raises."""
    header = next(lines, "").strip().lstrip("\ufeff")
    names = [h.strip() for h in header.split(",")]
    for layout, cols in _LAYOUTS.items():
        if all(c in names for c in cols):
            break
    else:
        raise ValueError(
            f"{where} line 1: the header must name the columns {','.join(AZURE_COLUMNS)} "
            f"or {','.join(REBASED_COLUMNS)} (got {header[:80]!r})"
        )
    it, ip, io = (names.index(c) for c in cols)
    width = len(names)
    t_name, p_name, o_name = cols
    times: list[float] = []
    prompts: list[int] = []
    outputs: list[int] = []
    stamp, whole = _STAMP.fullmatch, _INT.fullmatch
    days: dict[str, int] = {}
    first_day = 0
    for number, line in enumerate(lines, start=2):
        line = line.rstrip("\r\n")
        if not line.strip():
            continue  # blank lines (a trailing newline) are skipped
        fields = line.split(",")
        if len(fields) != width:
            raise ValueError(f"{where} line {number}: expected {width} fields (got {len(fields)}: {line[:80]!r})")
        p, o = fields[ip].strip(), fields[io].strip()
        if not whole(p) or int(p) < 1:
            raise ValueError(f"{where} line {number}: field {p_name!r} must be an integer >= 1 (got {p!r})")
        if not whole(o) or int(o) < 1:
            raise ValueError(f"{where} line {number}: field {o_name!r} must be an integer >= 1 (got {o!r})")
        raw = fields[it].strip()
        if layout == "azure":
            m = stamp(raw)
            if m is None:
                raise ValueError(
                    f"{where} line {number}: field {t_name!r} must be a time YYYY-MM-DD HH:MM:SS[.fff] (got {raw!r})"
                )
            day = days.get(raw[:10])
            if day is None:
                try:
                    # days from the first date seen, so seconds keep their microseconds
                    day = date(int(m[1]), int(m[2]), int(m[3])).toordinal() - first_day
                    if not days:
                        first_day, day = day, 0
                    days[raw[:10]] = day
                except ValueError:
                    raise ValueError(f"{where} line {number}: field {t_name!r} has no such date (got {raw!r})") from None
            h, mi, s = int(m[4]), int(m[5]), float(m[6])
            if h > 23 or mi > 59 or s >= 61:
                raise ValueError(f"{where} line {number}: field {t_name!r} has no such time of day (got {raw!r})")
            t = day * 86400.0 + h * 3600 + mi * 60 + s
        else:
            try:
                t = float(raw)
            except ValueError:
                t = math.nan
            if not math.isfinite(t) or t < 0:
                raise ValueError(f"{where} line {number}: field {t_name!r} must be a number of seconds >= 0 (got {raw!r})")
        times.append(t)
        prompts.append(int(p))
        outputs.append(int(o))
    return times, prompts, outputs


# --- replay through the slot pool -------------------------------------------------------


def trace_scenario(trace: Trace, hold_s: Sequence[float], base: Scenario | None = None) -> Scenario:
    """The slot-pool scenario a replay of ``trace`` runs in.

    Everything but the interactive side comes from ``base`` (default: the
    default :class:`Scenario`, event-driven): slots, backlog, batch service
    range, preemption cost, seed, clock.  The window is the trace's span rounded up to whole seconds (one
    tick past the last arrival); ``inter_service_s`` is the range of the
    holds rounded out to whole seconds and both rates are the trace's mean
    rate (they only describe the run: the arrivals and holds come from the
    trace).
    """
    base = Scenario() if _checks.instance("base", base, Scenario, none_ok=True) is None else base
    holds, ticks = _holds(trace, hold_s)
    rate = min(trace.rate_per_s, 500.0)
    return base.with_(
        hours=ticks / 3600,
        inter_service_s=(max(1, math.floor(min(holds))), math.ceil(max(holds) - 1e-9)),
        trough_rate=rate,
        peak_rate=rate,
    )


def _holds(trace: Trace, hold_s: Sequence[float]) -> tuple[list[float], int]:
    """The holds, checked (seconds, > 0), and the whole seconds the replay needs."""
    _checks.instance("trace", trace, Trace)
    hold_s = _checks.sequence("hold_s", hold_s, what="seconds")
    if len(hold_s) != trace.n_requests:
        raise ValueError(f"hold_s must have one entry per request ({trace.n_requests}) (got {len(hold_s)})")
    holds = []
    for h in hold_s:
        if type(h) is not float or not 0 < h <= MAX_SERVICE_S:
            try:
                h = _checks.number("hold_s", h, lo=0, lo_open=True, hi=MAX_SERVICE_S)
            except ValueError:
                raise ValueError(f"hold_s must hold numbers of seconds > 0 and at most {MAX_SERVICE_S} "
                                 f"(got {_checks.show(h)})") from None
        holds.append(float(h))
    return holds, int(trace.arrival_s[-1]) + 1


def trace_stream(trace: Trace, hold_s: Sequence[float], scenario: Scenario) -> ArrivalStream:
    """The arrival stream of a replay: the trace's requests, the scenario's backlog.

    Request i arrives at ``arrival_s[i]`` (second ``floor(arrival_s[i])``, the rest its offset
    inside that second, read by clocks finer than 1 s) and holds its slot for
    ``hold_s[i]`` seconds: exactly when event-driven, rounded up to whole
    ticks on a tick clock (at ``tick_s=1``, whole seconds, at least one), so the stream
    holds what the run uses.  The backlog is drawn as the
    course's runs draw it: ``scenario.backlog`` uniform integers from
    ``scenario.batch_service_s`` with ``random.Random(scenario.seed)``.
    ``scenario`` must be the one :func:`trace_scenario` made for these holds
    (its window and service range fit them).  Pass the stream to
    :func:`lanes.simulate` (``stream=``) or :func:`lanes.run_table`.
    """
    holds, ticks = _holds(trace, hold_s)
    _checks.instance("scenario", scenario, Scenario)
    if scenario.tick_s:  # the clock's holds: whole ticks, rounded up (whole seconds at tick_s=1)
        per_s = scenario.ticks_per_s
        holds = [max(1, math.ceil(h * per_s - 1e-9)) for h in holds]
        holds = holds if per_s == 1 else [k / per_s for k in holds]
    if scenario.ticks < ticks or scenario.inter_service_s[1] < max(holds) - 1e-9:
        raise ValueError(
            "scenario must cover the trace: make it with trace_scenario(trace, hold_s, base) "
            f"(got {scenario.ticks} ticks for {ticks}, service up to {scenario.inter_service_s[1]} s for {max(holds)})"
        )
    rng = random.Random(scenario.seed)
    lo, hi = scenario.batch_service_s
    backlog = tuple(rng.randint(lo, hi) for _ in range(scenario.backlog))
    when = tuple(int(t) for t in trace.arrival_s)
    return ArrivalStream(backlog, when, tuple(holds), tuple(t - w for t, w in zip(trace.arrival_s, when)), scenario.ticks)


# --- checks of the columns --------------------------------------------------------------


def _arrivals(values: object) -> tuple[float, ...]:
    """``values`` as a tuple of finite seconds >= 0, non-decreasing."""
    if type(values) is not tuple or not all(type(t) is float for t in values):
        items = _checks.sequence("arrival_s", values, what="seconds")
        values = tuple(_checks.number(f"arrival_s[{i}]", t, lo=0) for i, t in enumerate(items))
    if not all(0 <= t < math.inf for t in values):  # nan fails too
        i = next(i for i, t in enumerate(values) if not 0 <= t < math.inf)
        _checks.number(f"arrival_s[{i}]", values[i], lo=0)
    if any(b < a for a, b in zip(values, values[1:])):
        i = next(i for i in range(1, len(values)) if values[i] < values[i - 1])
        raise ValueError(f"arrival_s must be non-decreasing (got {values[i]!r} after {values[i - 1]!r} at index {i})")
    return values


def _tokens(name: str, values: object) -> tuple[int, ...]:
    """``values`` as a tuple of token counts, integers >= 1."""
    if type(values) is tuple and all(type(x) is int and x >= 1 for x in values):
        return values
    items = _checks.sequence(name, values, what="token counts")
    return tuple(_checks.integer(f"{name}[{i}]", x, lo=1) for i, x in enumerate(items))
