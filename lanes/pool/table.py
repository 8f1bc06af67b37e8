"""Several policies on one scenario: the anchor table, its text layout and JSON rows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import _checks
from .arrivals import ArrivalStream, draw_stream
from .engine import simulate
from .policies import DEFAULT_POLICIES, Policy, parse_policy
from .results import SlotPoolResult
from .scenario import Scenario

if TYPE_CHECKING:  # pragma: no cover
    import pandas

HEADER = f"{'policy':<14}{'inter p50':>10}{'p99':>7}{'max':>7}{'wait>2s':>9}{'batch done':>12}{'preempted':>11}{'slot use':>10}"


def run_table(
    scenario: Scenario | None = None,
    policies: Any = DEFAULT_POLICIES,
    *,
    stream: ArrivalStream | None = None,
    **extensions: object,
) -> PolicyTable:
    """Run several policies on one scenario and its one set of draws (the anchor table by default).

    ``policies`` is a sequence of what :func:`lanes.simulate` takes, or a
    comma-separated string of specs; ``stream`` and ``extensions`` as there.
    """
    scenario = Scenario() if scenario is None else scenario
    if isinstance(policies, str):
        policies = parse_policies(policies)
    items = _checks.sequence("policies", policies, what="policy specs", min_len=1)
    stream = draw_stream(scenario) if stream is None else stream
    return PolicyTable(scenario, tuple(simulate(scenario, p, stream=stream, **extensions) for p in items))


def parse_policies(specs: str, **extensions: object) -> tuple[Policy, ...]:
    """Parse a comma-separated list of specs, such as the CLI's ``--policies``."""
    if not isinstance(specs, str):
        raise ValueError(f"policies must be a comma-separated string of specs (got {_checks.show(specs)})")
    parts = [p for p in (s.strip() for s in specs.split(",")) if p]
    if not parts:
        raise ValueError(f"policies must list at least one policy, e.g. {','.join(DEFAULT_POLICIES)}")
    return tuple(parse_policy(p, **extensions) for p in parts)


@dataclass(frozen=True)
class PolicyTable:
    """Several policies run on one scenario (one shared arrival stream)."""

    scenario: Scenario
    results: tuple[SlotPoolResult, ...]

    def __iter__(self):
        return iter(self.results)

    def __len__(self) -> int:
        return len(self.results)

    def __getitem__(self, key: int | str) -> SlotPoolResult:
        """A result by position or by policy spec (``table["reserve:8"]``)."""
        if isinstance(key, str):
            for r in self.results:
                if r.spec == key:
                    return r
            raise KeyError(key)
        return self.results[key]

    @staticmethod
    def header(scenario: Scenario) -> str:
        """The anchor layout's first three lines: the scenario, a blank line, the column names."""
        return "\n".join([scenario.describe(), "", HEADER])

    def text(self) -> str:
        """The table in the anchor program's layout, header line included."""
        return "\n".join([self.header(self.scenario), *(r.line() for r in self.results)])

    def rows(self) -> list[dict[str, Any]]:
        """One JSON row per policy (see :meth:`SlotPoolResult.row`)."""
        return [r.row() for r in self.results]

    def to_frame(self) -> "pandas.DataFrame":
        """The table as a DataFrame, one row per policy, indexed by spec."""
        import pandas as pd

        return pd.DataFrame(self.rows()).set_index("policy")
