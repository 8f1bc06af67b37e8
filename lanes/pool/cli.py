"""``python -m lanes table`` and ``python -m lanes trace``: the slot-pool table, trace summaries.

``table`` prints the anchor program's table for any scenario and any list of
policies, as text in the anchor layout or as JSON rows; with ``--trace`` the
interactive arrivals and hold times come from a request trace.  ``trace``
summarises a trace file.  Standard library only.
"""

from __future__ import annotations

import argparse

from .. import _checks
from .policies import DEFAULT_POLICIES, VICTIMS
from .scenario import Scenario
from .table import PolicyTable, parse_policies, run_table
from . import traces


def int_arg(text: str) -> int:
    """argparse type: an integer, or one line saying so."""
    try:
        return int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer (got {_checks.show(text)})") from None


def float_arg(text: str) -> float:
    """argparse type: a number, or one line saying so."""
    try:
        return float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a number (got {_checks.show(text)})") from None


def add_scenario_flags(p: argparse.ArgumentParser) -> None:
    """The scenario's knobs as flags; defaults are the anchor scenario's."""
    d = Scenario()
    g = p.add_argument_group("scenario (defaults: the course's anchor run, event-driven; --tick 1 is the anchor's clock)")
    g.add_argument("--slots", type=int_arg, default=d.slots, help=f"decode slots in the pool (default {d.slots})")
    g.add_argument("--hours", type=float_arg, default=d.hours, help=f"simulated hours, at most a week (default {d.hours})")
    g.add_argument("--backlog", type=int_arg, default=d.backlog, help=f"batch jobs queued at t=0 (default {d.backlog})")
    g.add_argument("--batch-service", type=int_arg, nargs=2, metavar=("LO", "HI"), default=list(d.batch_service_s),
                   help="batch job slot time range, seconds (default %(default)s)")
    g.add_argument("--inter-service", type=int_arg, nargs=2, metavar=("LO", "HI"), default=list(d.inter_service_s),
                   help="interactive request slot time range, seconds (default %(default)s)")
    g.add_argument("--trough-rate", type=float_arg, default=d.trough_rate, help="interactive req/s at the trough (default %(default)s)")
    g.add_argument("--peak-rate", type=float_arg, default=d.peak_rate, help="interactive req/s at the peak (default %(default)s)")
    g.add_argument("--preempt-cost", type=int_arg, default=d.preempt_cost_s, help="seconds redone after an eviction (default %(default)s)")
    g.add_argument("--seed", type=int_arg, default=d.seed, help="random seed (default %(default)s)")
    g.add_argument("--tick", type=float_arg, default=d.tick_s, metavar="SECONDS",
                   help="scheduling clock: seconds between decisions, 1 (the anchor), a fraction of a second"
                        " such as 0.02, or 0 to schedule at every arrival and completion (default %(default)s)")
    g.add_argument("--eviction-stall", type=float_arg, default=d.eviction_stall_s, metavar="SECONDS",
                   help="seconds every running sequence stalls per eviction while the victim's cache is recomputed"
                        " (default %(default)s; give --preempt-cost 0 with it so the victim is not charged twice)")


def scenario_from(args: argparse.Namespace) -> Scenario:
    return Scenario(
        slots=args.slots,
        hours=args.hours,
        backlog=args.backlog,
        batch_service_s=tuple(args.batch_service),
        inter_service_s=tuple(args.inter_service),
        trough_rate=args.trough_rate,
        peak_rate=args.peak_rate,
        preempt_cost_s=args.preempt_cost,
        seed=args.seed,
        tick_s=args.tick,
        eviction_stall_s=args.eviction_stall,
    )


def add_subcommands(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "table",
        help="compare policies on the slot pool (the course's anchor table)",
        description="Run each policy on the same scenario and print the comparison table.",
    )
    p.add_argument("--policies", default=",".join(DEFAULT_POLICIES),
                   help="comma-separated specs: fifo, priority, reserve:R, preempt, hybrid:R (default %(default)s)")
    p.add_argument("--policy-file", metavar="FILE", default=None,
                   help="run the policy defined in this Python file (one class with decide(obs), or one function)"
                        " and print its row instead")
    p.add_argument("--json", action="store_true", help="print a JSON list of rows instead of the table")
    p.add_argument("--trace", metavar="NAME_OR_PATH", default=None,
                   help="replay a request trace (conv, code or a CSV path) as the interactive traffic; "
                        "hold times from the h200-measured step profile; --hours, --inter-service "
                        "and the rate flags are then taken from the trace")
    add_scenario_flags(p)
    g = p.add_argument_group("extensions (all off by default)")
    g.add_argument("--floor", type=int_arg, default=0, help="slots batch keeps while it has work")
    g.add_argument("--aging", type=int_arg, default=None, metavar="SECONDS",
                   help="never evict a batch job that has waited longer than this")
    g.add_argument("--promote", type=int_arg, default=None, metavar="SECONDS",
                   help="a batch job that has waited this long outranks requests that arrive later")
    g.add_argument("--victim", default="youngest", help=f"eviction order: {', '.join(VICTIMS)}")
    g.add_argument("--min-run", type=int_arg, default=0, metavar="SECONDS",
                   help="never evict a batch job that has run less than this")
    p.set_defaults(func=_table)

    t = subparsers.add_parser(
        "trace",
        help="summarise a request trace (conv, code, or a CSV file in the Azure or re-based layout)",
        description="Print a trace's requests, span, mean rate and token quantiles "
                    "(nearest rank: sorted[int(q * n)]).",
    )
    t.add_argument("trace", metavar="NAME_OR_PATH", help=f"a shipped trace ({', '.join(traces.SHIPPED)}) or a CSV path")
    t.add_argument("--json", action="store_true", help="print the summary as one JSON object")
    t.set_defaults(func=_trace)


def _trace(args: argparse.Namespace) -> int:
    summary = traces.load_trace(args.trace).summary()
    if args.json:
        import json

        print(json.dumps(summary))
        return 0
    print(trace_text(summary, shipped=args.trace in traces.SHIPPED))
    return 0


def trace_text(s: dict, *, shipped: bool = False) -> str:
    """The ``trace`` command's text: one line of totals, a small table of token quantiles."""
    lines = [
        f"trace {s['name']}: {s['requests']:,} requests over {s['span_s']:,.0f} s, "
        f"mean rate {s['rate_per_s']:.2f} req/s",
        f"{'':<15}{'p50':>8}{'p99':>8}{'max':>8}",
    ]
    for label in ("prompt", "output"):
        lines.append(f"{label + ' tokens':<15}" + "".join(f"{s[f'{label}_{q}']:>8,}" for q in ("p50", "p99", "max")))
    if shipped:
        lines.append(f"source: {traces.ATTRIBUTION}")
    return "\n".join(lines)


def _table(args: argparse.Namespace) -> int:
    scenario = scenario_from(args)
    if args.policy_file is not None:
        return _policy_file_row(scenario, args)
    policies = parse_policies(
        args.policies, floor=args.floor, aging_s=args.aging, promote_s=args.promote, victim=args.victim,
        min_run_s=args.min_run,
    )
    stream = header = None
    if args.trace is not None:
        replay_inputs = getattr(args, "replay_inputs", None)
        if replay_inputs is None:  # pragma: no cover - only when this parser is used on its own
            raise ValueError("--trace needs the engine's step profile: run it as python -m lanes table --trace ...")
        trace = traces.load_trace(args.trace)
        scenario, stream = replay_inputs(trace, scenario)
        header = trace_header(trace, scenario, stream)
    table = run_table(scenario, policies, stream=stream)
    if args.json:
        import json

        print(json.dumps(table.rows()))
    else:
        head = PolicyTable.header(scenario) if header is None else "\n".join([header, "", PolicyTable.header(scenario).splitlines()[-1]])
        print("\n".join([head, *(r.line() for r in table)]))
    return 0


def trace_header(trace: traces.Trace, scenario: Scenario, stream) -> str:
    """First line of ``table --trace``: the trace, its holds (and whether the clock rounds them), the pool."""
    holds = stream.inter_service_s
    bl, bh = scenario.batch_service_s
    clock = ("event-driven" if not scenario.tick_s else
             f"holds rounded up to whole {'seconds' if scenario.tick_s == 1 else f'{scenario.tick_s:g} s ticks'}")
    return (
        f"trace {trace.name}: {trace.n_requests:,} requests over {trace.span_s:,.0f} s "
        f"({trace.rate_per_s:.2f} req/s) x {sum(holds) / len(holds):.2f} s mean hold ({clock}); "
        f"{scenario.slots} slots, batch backlog {scenario.backlog} x {bl}-{bh} s"
    )


def _policy_file_row(scenario: Scenario, args: argparse.Namespace) -> int:
    """``--policy-file``: the file's scheduler run on the scenario, one row."""
    from .engine import simulate
    from .protocol import load_policy_file

    others = [flag for flag, on in (("--policies", args.policies != ",".join(DEFAULT_POLICIES)),
                                    ("--floor", args.floor != 0), ("--aging", args.aging is not None),
                                    ("--promote", args.promote is not None),
                                    ("--victim", args.victim != "youngest"), ("--min-run", args.min_run != 0)) if on]
    if others:
        raise ValueError(f"policy-file runs the policy in the file, so {', '.join(others)} cannot be given with it")
    result = simulate(scenario, load_policy_file(args.policy_file))
    if args.json:
        import json

        print(json.dumps([result.row()]))
    else:
        print(PolicyTable.header(scenario))
        print(result.line())
    return 0
