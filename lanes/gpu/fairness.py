"""Tenant fairness: round-robin by request versus a token-fair scheduler.

Two tenants with very different requests share one engine.  Round-robin by
request admits one request from each in turn, so the tenant with long requests
takes almost all of the GPU.  The token-fair scheduler keeps a counter per tenant,
charges it the weighted tokens of every request it admits (1 per input token
and, by default, the rule of thumb of 3 per output token, because output tokens
come from memory-bound decode steps; :func:`lanes.gpu.chains.token_weights`
prices the output weight on the step model instead), and always admits the
tenant furthest behind, so weighted tokens split about evenly.

Every tenant is backlogged (always has a request waiting); the run stops once
the engine has been given ``capacity_weighted_tokens`` of work.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .. import _checks


@dataclass(frozen=True)
class Tenant:
    """A tenant and the shape of its requests.

    Parameters
    ----------
    name : str
        Tenant name, unique within a run.
    input_tokens, output_tokens : int
        Tokens per request (input >= 1, output >= 0).
    """

    name: str
    input_tokens: int
    output_tokens: int

    def __post_init__(self) -> None:
        _checks.text("name", self.name)
        object.__setattr__(self, "input_tokens", _checks.integer("input_tokens", self.input_tokens, lo=1))
        object.__setattr__(self, "output_tokens", _checks.integer("output_tokens", self.output_tokens, lo=0))

    def cost(self, *, input_weight: float = 1.0, output_weight: float = 3.0) -> float:
        """Weighted tokens of one request: ``input_weight x input + output_weight x output``."""
        wi = _checks.number("input_weight", input_weight, lo=0)
        wo = _checks.number("output_weight", output_weight, lo=0)
        return wi * self.input_tokens + wo * self.output_tokens


#: Most admissions one :func:`schedule` run makes (each is kept in ``order``).
MAX_ADMISSIONS = 1_000_000


def admissions_needed(costs: Sequence[float], capacity: float, policy: str) -> float:
    """About how many admissions :func:`schedule` makes before ``capacity`` is given out.

    ``costs`` are the tenants' request costs and ``capacity`` the weighted tokens
    to give out (both in weighted tokens); ``policy`` is ``"round-robin"`` or
    ``"token-fair"``.  :func:`schedule` refuses a run that needs more than
    :data:`MAX_ADMISSIONS`; a caller can ask first.

    Round-robin admits one request of each tenant per round, a round costing
    the sum of the costs; token-fair gives each tenant about an equal share of
    the capacity, in requests of its own cost.
    """
    costs = [_checks.number("costs", c, lo=0, lo_open=True)
             for c in _checks.sequence("costs", costs, what="request costs", min_len=1)]
    capacity = _checks.number("capacity", capacity, lo=0, lo_open=True)
    _checks.choice("policy", policy, tuple(POLICIES))
    n = len(costs)
    if policy == "round-robin":
        return n * capacity / sum(costs) + n
    return sum(capacity / n / c for c in costs) + n


# Policies share one signature: (weighted tokens charged so far per tenant,
# admissions so far) -> position of the tenant to admit next.


def _round_robin(charged: Sequence[float], admitted: int) -> int:
    return admitted % len(charged)


def _token_fair(charged: Sequence[float], admitted: int) -> int:
    return min(range(len(charged)), key=lambda i: (charged[i], i))  # furthest behind; ties by order


POLICIES: dict[str, Callable[[Sequence[float], int], int]] = {
    "round-robin": _round_robin,
    "token-fair": _token_fair,
}
"""Admission policies by name."""


@dataclass(frozen=True)
class FairnessResult:
    """Outcome of :func:`schedule`.

    Attributes
    ----------
    policy : str
        The policy's name.
    order : tuple of str
        Tenant names in admission order.
    requests : dict
        Requests admitted per tenant.
    weighted_tokens : dict
        Weighted tokens admitted per tenant.
    shares : dict
        Each tenant's fraction of all weighted tokens (sums to 1).
    """

    policy: str
    order: tuple[str, ...]
    requests: dict[str, int]
    weighted_tokens: dict[str, float]
    shares: dict[str, float]

    def to_dict(self) -> dict:
        """Plain dict (unrounded numbers), ready for JSON."""
        return {
            "policy": self.policy,
            "requests": dict(self.requests),
            "weighted_tokens": dict(self.weighted_tokens),
            "shares": dict(self.shares),
        }


def schedule(
    tenants: Sequence[Tenant],
    *,
    policy: str = "token-fair",
    capacity_weighted_tokens: float = 1e6,
    input_weight: float = 1.0,
    output_weight: float = 3.0,
) -> FairnessResult:
    """Admit requests from backlogged tenants until the capacity is given out.

    Parameters
    ----------
    tenants : sequence of Tenant
        At least one tenant; names must be unique.
    policy : {"token-fair", "round-robin"}
        ``"token-fair"`` admits the tenant with the fewest weighted tokens
        charged so far; ``"round-robin"`` takes tenants in turn, one request each.
    capacity_weighted_tokens : float
        Work the engine does in the run, in weighted tokens (> 0).
    input_weight, output_weight : float
        Weighted tokens per input and per output token.

    Returns
    -------
    FairnessResult
        Admissions, weighted tokens and shares per tenant.
    """
    pick = POLICIES[_checks.choice("policy", policy, tuple(POLICIES))]
    capacity = _checks.number("capacity_weighted_tokens", capacity_weighted_tokens, lo=0, lo_open=True)
    tenants = _checks.sequence("tenants", tenants, what="Tenant")
    if not tenants:
        raise ValueError("tenants must contain at least one tenant (got 0)")
    for t in tenants:
        _checks.instance("tenants", t, Tenant)
    names = [t.name for t in tenants]
    if len(set(names)) != len(names):
        raise ValueError(f"tenants must have unique names (got {', '.join(names)})")
    costs = [t.cost(input_weight=input_weight, output_weight=output_weight) for t in tenants]
    if not all(c > 0 for c in costs):
        raise ValueError("every tenant's request must cost > 0 weighted tokens (check input_weight and output_weight)")
    needed = admissions_needed(costs, capacity, policy)
    if needed > MAX_ADMISSIONS:
        raise ValueError(
            f"capacity_weighted_tokens must leave at most {MAX_ADMISSIONS} admissions, each one recorded "
            f"(got {capacity!r}: about {needed:.3g} admissions at these request costs)"
        )

    charged = [0.0] * len(tenants)
    counts = [0] * len(tenants)
    order: list[str] = []
    total = 0.0
    while total < capacity:
        i = pick(charged, len(order))
        charged[i] += costs[i]
        counts[i] += 1
        order.append(names[i])
        total += costs[i]
    return FairnessResult(
        policy=policy,
        order=tuple(order),
        requests=dict(zip(names, counts)),
        weighted_tokens=dict(zip(names, charged)),
        shares={n: c / total for n, c in zip(names, charged)},
    )
