"""A pool measured in KV-cache blocks instead of sequence slots, and what an eviction costs.

The slot pool of :mod:`lanes.pool.engine` counts sequences: every request holds
one slot.  A real engine runs out of KV-cache memory first, and a long-context
batch sequence holds as much KV as dozens of chats.  This module models that:

* :class:`KvScenario` is a pool of ``pool_tokens`` KV tokens, allocated in
  blocks of ``block_tokens`` (vLLM's paged allocator uses 16), with a cap on
  sequences, Poisson chat arrivals and a backlog of long batch sequences.
* :func:`simulate_kv_pool` admits work tick by tick (one tick = one second)
  under a headroom rule that counts either sequences (``"slots:R"``: batch may
  start while R sequence slots stay free) or KV tokens (``"tokens:R"``: batch
  may start while R tokens of KV stay free).  It also records the decode step
  time the KV in use implies, because every sequence's KV is read at every step.
* :func:`preemption_costs` prices one eviction of a sequence three ways (swap
  its KV to host memory and back, recompute it, restart from a checkpoint), in
  seconds of the whole engine; :meth:`PreemptionCost.as_slot_costs` turns them
  into the slot-seconds the slot pool's ``preempt_cost_s`` counts.

Simplifications: a sequence reserves its whole context when admitted and
holds it for a fixed time; chats are served first come first served.
Standard library only; randomness comes from ``random.Random(seed)``.
"""

from __future__ import annotations

import heapq
import math
import random
from dataclasses import dataclass, field, replace

from .. import _checks
from .._stats import percentile
from ..pool.arrivals import poisson_count
from .hardware import Hardware, get_hardware, get_model
from .transformer import Model

RULES = ("slots", "tokens")
"""Headroom rules: count free sequence slots, or free KV tokens."""


#: Longest simulated window of :class:`KvScenario`, in seconds (two days: about 5 s).
MAX_SECONDS = 2 * 86_400
#: Most chats a :class:`KvScenario` may expect (rate x seconds), each simulated.
MAX_EXPECTED_CHATS = 2_000_000


def _model(model: Model | str) -> Model:
    return model if isinstance(model, Model) else get_model(model)


def _hardware(hardware: Hardware | str) -> Hardware:
    return hardware if isinstance(hardware, Hardware) else get_hardware(hardware)


def pool_tokens_for(
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
    *,
    memory_fraction: float = 0.9,
) -> int:
    """KV tokens that fit on one accelerator after the weights.

    Parameters
    ----------
    model, hardware : str or catalog entry
    memory_fraction : float
        Share of HBM the engine may use, in (0, 1] (vLLM's
        ``gpu_memory_utilization``, 0.9 by default).

    Returns
    -------
    int
        ``(memory x fraction - weight bytes) / KV bytes per token`` (tokens),
        426,788 for Llama 3.1 8B on an H100 SXM at 0.9.
    """
    frac = _checks.number("memory_fraction", memory_fraction, lo=0, hi=1, lo_open=True)
    m, h = _model(model), _hardware(hardware)
    spare = h.memory_bytes * frac - m.weight_bytes
    if spare <= 0:
        raise ValueError(f"memory_fraction leaves no room for KV after the weights (got {frac!r})")
    return int(spare // m.kv_bytes_per_token)


def decode_step_s(
    kv_tokens: float,
    *,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> float:
    """Memory-bound decode step time with ``kv_tokens`` of KV in use (s).

    ``(weight bytes + kv_tokens x KV bytes per token) / HBM bandwidth``: the
    weights and every running sequence's KV are read once per step.
    """
    kv = _checks.number("kv_tokens", kv_tokens, lo=0)
    m, h = _model(model), _hardware(hardware)
    return (m.weight_bytes + kv * m.kv_bytes_per_token) / h.hbm_bytes_per_s


@dataclass(frozen=True)
class KvScenario:
    """Chats and long batch sequences sharing one KV pool.

    Parameters
    ----------
    pool_tokens : int
        KV capacity in tokens (>= block_tokens); see :func:`pool_tokens_for`.
    block_tokens : int
        Tokens per KV block; a sequence holds ``ceil(tokens / block_tokens)`` blocks.
    max_sequences : int
        Engine cap on running sequences (vLLM's ``max_num_seqs``), the "slots".
    chat_rate_per_s : float
        Poisson arrival rate of chats (requests/s).
    chat_tokens : int
        KV tokens a chat holds (prompt plus output).
    chat_hold_s : int
        Seconds a chat holds its KV.
    batch_tokens : int
        KV tokens a batch sequence holds (a long-context document, say).
    batch_hold_s : int
        Seconds a batch sequence holds its KV.
    backlog : int
        Batch sequences queued at t = 0.
    seconds : int
        Simulated time (one tick per second), at most :data:`MAX_SECONDS`; the
        expected chats, ``chat_rate_per_s x seconds``, at most :data:`MAX_EXPECTED_CHATS`.
    warmup_s : int
        Chats arriving before this tick are not measured (the pool starts empty,
        so the first minutes are not typical); < ``seconds``.
    seed : int
        Seed of the arrivals.
    model, hardware : str
        Catalog names used for the decode step time.
    """

    pool_tokens: int = 426_788
    block_tokens: int = 16
    max_sequences: int = 64
    chat_rate_per_s: float = 4.0
    chat_tokens: int = 2_000
    chat_hold_s: int = 8
    batch_tokens: int = 32_000
    batch_hold_s: int = 120
    backlog: int = 10_000
    seconds: int = 3_600
    warmup_s: int = 600
    seed: int = 3
    model: str = "llama-3.1-8b"
    hardware: str = "h100-sxm"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "block_tokens", _checks.integer("block_tokens", self.block_tokens, lo=1))
        set_(self, "pool_tokens", _checks.integer("pool_tokens", self.pool_tokens, lo=self.block_tokens, lo_name="block_tokens"))
        set_(self, "max_sequences", _checks.integer("max_sequences", self.max_sequences, lo=1))
        set_(self, "chat_rate_per_s", _checks.number("chat_rate_per_s", self.chat_rate_per_s, lo=0, hi=500))
        set_(self, "chat_tokens", _checks.integer("chat_tokens", self.chat_tokens, lo=1))
        set_(self, "chat_hold_s", _checks.integer("chat_hold_s", self.chat_hold_s, lo=1))
        set_(self, "batch_tokens", _checks.integer("batch_tokens", self.batch_tokens, lo=1))
        set_(self, "batch_hold_s", _checks.integer("batch_hold_s", self.batch_hold_s, lo=1))
        set_(self, "backlog", _checks.integer("backlog", self.backlog, lo=0))
        set_(self, "seconds", _checks.integer("seconds", self.seconds, lo=1, hi=MAX_SECONDS))
        set_(self, "warmup_s", _checks.integer("warmup_s", self.warmup_s, lo=0, hi=self.seconds - 1, hi_name="seconds - 1"))
        if self.chat_rate_per_s * self.seconds > MAX_EXPECTED_CHATS:
            raise ValueError(
                f"chat_rate_per_s x seconds must expect at most {MAX_EXPECTED_CHATS} chats "
                f"(got {self.chat_rate_per_s * self.seconds:.0f}: chat_rate_per_s={self.chat_rate_per_s!r}, "
                f"seconds={self.seconds})"
            )
        set_(self, "seed", _checks.integer("seed", self.seed, big=True))
        _model(self.model)
        _hardware(self.hardware)
        for name in ("chat_tokens", "batch_tokens"):
            if self.blocks_for(getattr(self, name)) > self.pool_blocks:
                raise ValueError(
                    f"{name} must fit in the pool, at most pool_tokens rounded down to whole blocks "
                    f"(got {getattr(self, name)} tokens, pool_tokens={self.pool_tokens}, block_tokens={self.block_tokens})"
                )

    @property
    def pool_blocks(self) -> int:
        """KV blocks in the pool."""
        return self.pool_tokens // self.block_tokens

    def blocks_for(self, tokens: int) -> int:
        """Blocks a sequence of ``tokens`` KV tokens holds (rounded up)."""
        return -(-tokens // self.block_tokens)

    @property
    def chat_kv_share(self) -> float:
        """Mean fraction of the pool chats need alone: rate x hold x blocks (Little's law)."""
        return self.chat_rate_per_s * self.chat_hold_s * self.blocks_for(self.chat_tokens) / self.pool_blocks

    def with_(self, **changes: object) -> "KvScenario":
        """Return a copy with some fields changed (validated again)."""
        return replace(self, **changes)


@dataclass(frozen=True)
class KvPoolResult:
    """One run of :func:`simulate_kv_pool`.

    Attributes
    ----------
    rule : str
        The headroom rule as parsed, e.g. ``"slots:16+tokens:50000"``.
    p50_wait_s, p99_wait_s, max_wait_s : int
        Waits for admission of chats that arrived after the warm-up, seconds
        (-1 if none was admitted).
    late_fraction : float
        Fraction of admitted chats that waited more than 2 s.
    batch_done : int
        Batch sequences finished within the run.
    mean_kv_used : float
        Mean fraction of KV blocks in use.
    mean_sequences : float
        Mean running sequences.
    mean_step_s, max_step_s : float
        Mean and largest decode step time (s) implied by the KV in use.
    chat_blocks, batch_blocks : tuple of int
        Blocks held by chats and by batch sequences at each tick.
    """

    scenario: KvScenario
    rule: str
    p50_wait_s: int
    p99_wait_s: int
    max_wait_s: int
    late_fraction: float
    batch_done: int
    mean_kv_used: float
    mean_sequences: float
    mean_step_s: float
    max_step_s: float
    chat_blocks: tuple[int, ...] = field(repr=False)
    batch_blocks: tuple[int, ...] = field(repr=False)

    def row(self) -> dict:
        """Scalar results as a dict (one table row)."""
        return {
            "rule": self.rule,
            "p50_wait_s": self.p50_wait_s,
            "p99_wait_s": self.p99_wait_s,
            "late_fraction": self.late_fraction,
            "batch_done": self.batch_done,
            "mean_kv_used": self.mean_kv_used,
            "mean_sequences": self.mean_sequences,
            "mean_step_s": self.mean_step_s,
            "max_step_s": self.max_step_s,
        }


def parse_rule(rule: str) -> dict[str, int]:
    """Parse a headroom rule into ``{kind: amount}``.

    ``"slots:8"`` keeps 8 sequence slots free of batch, ``"tokens:100000"``
    keeps 100,000 KV tokens free, and ``"slots:16+tokens:50000"`` requires both.
    """
    bad = f"rule must be 'slots:R', 'tokens:R' or both joined by '+', with R an integer >= 0 (got {_checks.show(rule)})"
    if not isinstance(rule, str) or not rule.strip():
        raise ValueError(bad)
    out: dict[str, int] = {}
    for part in rule.split("+"):
        kind, sep, amount = part.strip().partition(":")
        if not sep or kind in out:
            raise ValueError(bad)
        kind = _checks.choice("rule", kind, RULES)
        try:
            value = int(amount)
        except ValueError:
            raise ValueError(bad) from None
        out[kind] = _checks.integer("rule amount", value, lo=0)
    return out


def _poisson(rng: random.Random, lam: float) -> int:
    """Arrivals in one tick; no draw is made when nothing can arrive."""
    return poisson_count(lam, rng.random()) if lam > 0 else 0


def simulate_kv_pool(scenario: KvScenario | None = None, rule: str = "slots:8") -> KvPoolResult:
    """Run chats and a batch backlog on a KV pool under one headroom rule.

    Each tick: chats that arrived join a queue; finished sequences free their
    blocks; queued chats are admitted in order while a sequence slot and their
    blocks are free; then batch sequences start while a slot and their blocks
    are free *and* every clause of the rule still holds after the start
    (``slots:R``: at least R sequence slots free; ``tokens:R``: at least R
    tokens of KV free).

    Parameters
    ----------
    scenario : KvScenario, optional
        The pool and workload (defaults when omitted).
    rule : str
        ``"slots:R"``, ``"tokens:R"`` or both, ``"slots:R+tokens:R"``.

    Returns
    -------
    KvPoolResult
    """
    sc = KvScenario() if _checks.instance("scenario", scenario, KvScenario, none_ok=True) is None else scenario
    clauses = parse_rule(rule)
    keep_slots = clauses.get("slots", 0)
    rng = random.Random(sc.seed)
    chat_b, batch_b = sc.blocks_for(sc.chat_tokens), sc.blocks_for(sc.batch_tokens)
    reserve_blocks = sc.blocks_for(clauses.get("tokens", 0))
    free_blocks, free_seqs = sc.pool_blocks, sc.max_sequences
    ends: list[tuple[int, int, int]] = []  # (end tick, blocks, 1 if chat else 0)
    queue: list[int] = []  # arrival ticks of waiting chats, oldest first
    head = 0
    waits: list[int] = []
    left = sc.backlog
    batch_done = 0
    chat_held = batch_held = 0
    chat_series: list[int] = []
    batch_series: list[int] = []
    seq_total = 0
    step_total = 0.0
    step_max = 0.0
    kv_per_block = sc.block_tokens
    for t in range(sc.seconds):
        queue.extend([t] * _poisson(rng, sc.chat_rate_per_s))
        while ends and ends[0][0] <= t:
            _, blocks, is_chat = heapq.heappop(ends)
            free_blocks += blocks
            free_seqs += 1
            if is_chat:
                chat_held -= blocks
            else:
                batch_held -= blocks
                batch_done += 1
        while head < len(queue) and free_seqs and free_blocks >= chat_b:
            if queue[head] >= sc.warmup_s:
                waits.append(t - queue[head])
            head += 1
            free_blocks -= chat_b
            free_seqs -= 1
            chat_held += chat_b
            heapq.heappush(ends, (t + sc.chat_hold_s, chat_b, 1))
        while left and free_seqs and free_blocks >= batch_b:
            if free_seqs - 1 < keep_slots or free_blocks - batch_b < reserve_blocks:
                break
            left -= 1
            free_blocks -= batch_b
            free_seqs -= 1
            batch_held += batch_b
            heapq.heappush(ends, (t + sc.batch_hold_s, batch_b, 0))
        chat_series.append(chat_held)
        batch_series.append(batch_held)
        seq_total += sc.max_sequences - free_seqs
        step = decode_step_s((chat_held + batch_held) * kv_per_block, model=sc.model, hardware=sc.hardware)
        step_total += step
        step_max = max(step_max, step)
    waits.sort()
    n = len(waits)

    def pct(q: float) -> int:
        return percentile(waits, q)

    used = [c + b for c, b in zip(chat_series, batch_series)]
    return KvPoolResult(
        scenario=sc,
        rule="+".join(f"{k}:{v}" for k, v in clauses.items()),
        p50_wait_s=pct(0.5),
        p99_wait_s=pct(0.99),
        max_wait_s=waits[-1] if n else -1,
        late_fraction=sum(w > 2 for w in waits) / max(1, n),
        batch_done=batch_done,
        mean_kv_used=sum(used) / (len(used) * sc.pool_blocks),
        mean_sequences=seq_total / sc.seconds,
        mean_step_s=step_total / sc.seconds,
        max_step_s=step_max,
        chat_blocks=tuple(chat_series),
        batch_blocks=tuple(batch_series),
    )


# ---------------------------------------------------------------------------
# What one eviction costs


@dataclass(frozen=True)
class PreemptionCost:
    """Seconds one eviction of a sequence costs, three ways.

    ``swap_s``, ``swap_scattered_s`` and ``recompute_s`` are seconds of the
    *whole engine*: a prefill runs on the entire GPU, and a swap's copies sit
    in the step, so every sequence of the batch waits for them.
    ``checkpoint_s`` is seconds of the evicted job alone (its own lost work).
    Use :meth:`as_slot_costs` for the slot pool, which counts slot-seconds.

    Attributes
    ----------
    context_tokens : int
        Tokens of KV the evicted sequence held.
    kv_bytes : float
        Its KV cache in bytes.
    swap_s : float
        Copy the KV to host memory and back at the link's rated bandwidth.
    swap_scattered_s : float
        The same copies at the bandwidth small per-block copies reach.
    recompute_s : float
        Drop the KV and redo it as one prefill of the context.
    checkpoint_s : float
        Restart from the last checkpoint: half an interval of lost work on
        average, plus the restart.
    """

    context_tokens: int
    kv_bytes: float
    swap_s: float
    swap_scattered_s: float
    recompute_s: float
    checkpoint_s: float

    def as_slot_costs(self, slots: int = 64) -> dict[str, int]:
        """Each way in whole slot-seconds (rounded up), for ``Scenario(preempt_cost_s=...)``.

        The slot pool splits the engine into ``slots`` equal slots, so one slot
        does about ``1/slots`` of the engine's work per second and one second
        of the whole engine is worth ``slots`` slot-seconds.  The engine-wide
        costs (swap, scattered swap, recompute) are therefore multiplied by
        ``slots``: a 0.24 s prefill on a 64-slot engine is about 15.4
        slot-seconds.  The checkpoint restart is the job's own time in its own
        slot and is taken as it is.

        Parameters
        ----------
        slots : int
            Slots the engine is split into (>= 1; the slot pool's ``Scenario.slots``).
        """
        n = _checks.integer("slots", slots, lo=1)
        return {
            "swap": math.ceil(self.swap_s * n),
            "swap, scattered copies": math.ceil(self.swap_scattered_s * n),
            "recompute": math.ceil(self.recompute_s * n),
            "checkpoint restart": math.ceil(self.checkpoint_s),
        }

    def to_dict(self) -> dict:
        """Plain dict of unrounded numbers."""
        return dict(self.__dict__)


def preemption_costs(
    context_tokens: int = 131_072,
    *,
    link_bytes_per_s: float = 50e9,
    scattered_bytes_per_s: float = 3.5e9,
    checkpoint_interval_s: float = 60.0,
    restart_s: float = 5.0,
    mfu: float = 0.5,
    model: Model | str = "llama-3.1-8b",
    hardware: Hardware | str = "h100-sxm",
) -> PreemptionCost:
    """Price one eviction of a sequence holding ``context_tokens`` of KV.

    Parameters
    ----------
    context_tokens : int
        Tokens in the evicted sequence's KV cache.
    link_bytes_per_s : float
        Rated host-link bandwidth for one large batched copy (bytes/s).
    scattered_bytes_per_s : float
        Bandwidth reached by per-block copies (bytes/s; 3 to 4 GB/s for 32 KiB blocks).
    checkpoint_interval_s : float
        Seconds between checkpoints of a batch job (agent state, partial results).
    restart_s : float
        Seconds to restart a job from its checkpoint.
    mfu : float
        Model FLOPs utilisation of the recompute prefill, in (0, 1].
    model, hardware : str or catalog entry

    Returns
    -------
    PreemptionCost
        Swap moves ``2 x context x KV bytes/token`` (out and back); recompute is
        one prefill of the context on the roofline of :func:`lanes.gpu.steps.step_cost`.
        Both are seconds of the whole engine; see :meth:`PreemptionCost.as_slot_costs`.
    """
    from .steps import step_cost

    ctx = _checks.integer("context_tokens", context_tokens, lo=1)
    link = _checks.number("link_bytes_per_s", link_bytes_per_s, lo=0, lo_open=True)
    scattered = _checks.number("scattered_bytes_per_s", scattered_bytes_per_s, lo=0, lo_open=True)
    interval = _checks.number("checkpoint_interval_s", checkpoint_interval_s, lo=0)
    restart = _checks.number("restart_s", restart_s, lo=0)
    m, h = _model(model), _hardware(hardware)
    kv = ctx * m.kv_bytes_per_token
    return PreemptionCost(
        context_tokens=ctx,
        kv_bytes=kv,
        swap_s=2 * kv / link,
        swap_scattered_s=2 * kv / scattered,
        recompute_s=step_cost([(0, ctx)], model=m, hardware=h, mfu=mfu).duration_s,
        checkpoint_s=interval / 2 + restart,
    )
