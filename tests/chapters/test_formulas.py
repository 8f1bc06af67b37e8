"""Every formula the chapters state holds: as maths, and on the chapter's own values.

Each formula of a markdown cell (``$...$`` or ``$$...$$`` stating more than a
symbol) is translated from its LaTeX into Python by
:func:`scripts.prose_tools.formula_python` and bound here to a reference written
independently (:class:`scripts.prose_tools.Formula`): the two must agree at random
values of the symbols, so a sign, an exponent or an operator changed in the text
fails.  Where the chapter glues the formula's inputs and prints its value, the
binding names both, and the formula evaluated on those inputs must give the value
printed.  A formula with no symbols (``-\\ln(0.01) \\approx 4.6``) must hold as
written.  A formula added or rewritten in a chapter is bound here before the
chapter's ledger records (``python scripts/prose_tools.py record`` refuses
otherwise).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from scripts import prose_tools as prose
from scripts.prose_tools import Formula

ROOT = Path(__file__).resolve().parents[2]
CHAPTERS = sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb"))

_LITTLE = "L == lambda_ * W"
#: mean residual life of a job uniform on [lo, hi]: E[S^2] / (2 E[S])
_UNIFORM_ES = "({lo} + {hi}) / 2"
_UNIFORM_ES2 = "({lo}**2 + {lo}*{hi} + {hi}**2) / 3"


def _uniform(lo: str, hi: str) -> dict:
    return {"E_S": _UNIFORM_ES.format(lo=lo, hi=hi), "E_S_2": _UNIFORM_ES2.format(lo=lo, hi=hi)}


#: chapter -> the formula's LaTeX as the chapter types it -> what it states.
FORMULAS: dict[str, dict[str, Formula]] = {
    "01_slots_and_littles_law": {
        "L = \\lambda \\times W": Formula(_LITTLE),
        "L = \\lambda W": Formula(_LITTLE),
        "\\lambda \\times W": Formula("lambda_ * W", {"lambda_": "peak_rate", "W": "hold_s"}, "busy_peak"),
        "\\sqrt{L}": Formula("sqrt(L)", {"L": "busy_peak"}, "sd_peak"),
    },
    "02_why_priority_fails": {
        "2 \\times 0.5^n": Formula("2 * 0.5**n", {"n": "n_seeds"}, "1 - seeds_confidence",
                                   domain={"n": (1, 20)}),
        "B / D": Formula("B / D"),
        "D / B": Formula("D / B"),
        "E[S^2] / (2 E[S])": Formula("E_S_2 / (2 * E_S)", _uniform("batch_lo_s", "batch_hi_s"), "one_residual_s"),
        "E[S^2]": Formula("E_S_2"),
        "1 - \\rho": Formula("1 - rho", {"rho": "one_users_load"}, "1 - one_users_load"),
    },
    "03_headroom": {
        "D / W": Formula("D / W"),
        "c = L + \\beta \\sqrt{L}": Formula("c == L + beta * sqrt(L)"),
        "\\sqrt{L}": Formula("sqrt(L)", {"L": "(beta_sqrt_load / beta)**2"}, "beta_sqrt_load / beta"),
        "R = c - L": Formula("R == c - L"),
        "p = 0.01": Formula("p == 0.01", {"p": "p_wait"}, "p_wait"),
        "\\beta\\sqrt{L}": Formula("beta * sqrt(L)"),
        "E[S^2] / (2 E[S])": Formula("E_S_2 / (2 * E_S)", _uniform("long_lo_s", "long_hi_s"), "residual_long_s"),
        "B / E[S]": Formula("B / E_S", {"B": "b_long", "E_S": "drain_s"}, "1 / gap_long_s"),
        "E[S] / B": Formula("E_S / B", {"B": "b_short", "E_S": "short_mean_s"}, "gap_short_s"),
    },
    "04_preemption": {
        "g c": Formula("g * c"),
        "X / (1 - g c)": Formula("X / (1 - g * c)", {"X": "job_s", "g": "max(coarse_gc) / cost_s", "c": "cost_s"},
                                 "coarse_peak_job_s"),
        "g c < 1": Formula("g * c < 1"),
        "(e^{g X} - 1) / g": Formula("(exp(g * X) - 1) / g", {"X": "job_s", "g": "max(coarse_gc) / cost_s"},
                                     "coarse_peak_repeat_s"),
        "g c \\ge 1": Formula("g * c >= 1"),
    },
    "08_chains_memory_and_throughput": {
        "L = \\lambda W": Formula(_LITTLE, {"lambda_": "ll_rate", "W": "ll_ttft_s + (ll_out - 1) * ll_tpot_ms / 1000"},
                                  "ll_L"),
    },
    "09_chains_latency_and_fairness": {
        "1 / (1 - \\rho_{\\text{short}})": Formula("1 / (1 - rho_short)"),
        "E[S^2]": Formula("E_S_2"),
        "S / (1 - \\rho)": Formula("S / (1 - rho)", {"S": "knee_S_ms / 1000", "rho": "knee_rho"},
                                   "knee_target_s / log(100)"),
        "(1 + c_s^2) / 2": Formula("(1 + c_s**2) / 2", {"c_s": "sqrt(logn_cv2)"}, "pk_factor"),
    },
    "10_where_it_breaks": {
        "4.6\\,S / (1 - \\rho)": Formula("4.6 * S / (1 - rho)"),
        "(1 + c_s^2)/2": Formula("(1 + c_s**2) / 2", {"c_s": "sqrt(hold_cv2)"}, "ac_wait_s / mmc_wait_s"),
    },
}


def _load(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("path", CHAPTERS, ids=lambda p: p.stem)
def test_every_formula_holds_and_gives_the_value_printed(path):
    assert prose.check_formulas(_load(path), FORMULAS.get(path.stem, {})) == []


def test_every_binding_is_used():
    """A binding no chapter types any more is stale: the formula changed or left."""
    typed = {(p.stem, tex) for p in CHAPTERS for _, tex in prose.formulas_in(_load(p))}
    assert [(stem, tex) for stem, b in FORMULAS.items() for tex in b if (stem, tex) not in typed] == []


def _nb(text, **values):
    outs = [{"output_type": "display_data", "metadata": {"scrapbook": {"name": k, "mime_prefix": ""}},
             "data": {"application/papermill.record/text/plain": repr(v)}} for k, v in values.items()]
    return {"cells": [{"cell_type": "code", "outputs": outs}, {"cell_type": "markdown", "metadata": {}, "source": text}]}


class TestTheCheckCanFail:
    def test_a_changed_operator_or_exponent_differs_from_the_reference(self):
        ref = {"S / (1 - \\rho)": Formula("S / (1 - rho)"), "S / (1 + \\rho)": Formula("S / (1 - rho)"),
               "E[S^3] / (2 E[S])": Formula("E_S_2 / (2 * E_S)")}
        assert prose.check_formulas(_nb("mean $S / (1 - \\rho)$"), ref) == []
        assert "differs from its reference" in prose.check_formulas(_nb("mean $S / (1 + \\rho)$"), ref)[0]
        assert "symbols differ" in prose.check_formulas(_nb("the $E[S^3] / (2 E[S])$"), ref)[0]

    def test_an_unbound_formula_fails(self):
        (problem,) = prose.check_formulas(_nb("the wait $W = L / \\lambda$"), {})
        assert "not bound to a reference" in problem

    def test_a_formula_is_evaluated_on_the_chapter_values(self):
        ref = {"\\sqrt{L}": Formula("sqrt(L)", {"L": "busy"}, "sd")}
        nb = _nb("swing $\\sqrt{L}$", busy=40.0, sd=6.324555320336759)
        assert prose.check_formulas(nb, ref) == []
        nb = _nb("swing $\\sqrt{L}$", busy=40.0, sd=7.0)
        assert "on the chapter's inputs" in prose.check_formulas(nb, ref)[0]

    def test_a_constant_formula_must_hold(self):
        assert prose.check_formulas(_nb("$-\\ln(0.01) \\approx 4.6$"), {}) == []
        assert "is false" in prose.check_formulas(_nb("$-\\ln(0.01) \\approx 9.6$"), {})[0]


def test_every_formula_slip_in_the_book_fails_the_formula_check():
    """Independently of the ledger: every formula slip the generator makes, in every chapter."""
    escaped, made = [], 0
    for path in CHAPTERS:
        nb = _load(path)
        for s in prose.slips(nb, kinds=["formula"]):
            made += 1
            if not prose.check_formulas(s.nb, FORMULAS.get(path.stem, {})):
                escaped.append(f"{path.stem} cell {s.cell}: {s.before!r} -> {s.after!r}")
    assert made >= 30 and escaped == []
