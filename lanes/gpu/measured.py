"""Measured engine steps: load a step-timing file, fit the calibrated step model.

The package ships one file, ``data/h200-llama-3.1-8b-steps.jsonl``: decode and
prefill steps of a Llama-3.1-8B-shaped model timed on one NVIDIA H200, plus an
ablation of the decode step, the device's copy and matrix-product ceilings and
its host links.  ``scripts/measure_steps.py`` writes a file of the same format
for any CUDA GPU; every function here accepts such a file by path.

Public API (stable: the graded exercises use it)
-------------------------------------------------
DEFAULT_PATH
    Path of the shipped H200 file.
load_records(path=None) -> list[dict]
    The file's JSON objects, validated, in file order (standard library only).
    A malformed line raises one ``ValueError`` naming the file, line and field.
load(path=None) -> pandas.DataFrame
    The same records as a DataFrame (one row per line, a ``line`` column,
    missing fields as NaN); pandas is imported inside.
model_from_records(records) -> Model
    The model shape the file's ``env`` line describes, as a catalogue ``Model``.
link_rates(records) -> dict
    Host-link bandwidths (bytes/s) keyed ``pinned_out``, ``pinned_back``,
    ``pageable_out``, ``pageable_back`` ("out": device to host).
ceilings(records) -> dict
    ``copy_bytes_per_s`` and ``matmul_flops_per_s`` measured by the file.
eager_floor_s(records) -> float
    Median step time of the decode rows launched kernel by kernel.
weight_bytes_per_s(records) -> float
    Weight-streaming rate: the GEMV ablation row (else the copy ceiling).
fit_step_model(records=None) -> StepModel
    Least-squares fit of :class:`lanes.gpu.calibration.StepModel` in plain
    Python floats (the same bits on any CPU or BLAS), with the shapes it was
    fitted on in ``measured_range``.  On the shipped file it reproduces the
    stored :data:`lanes.gpu.calibration.H200_LLAMA_8B`.
kv_read_rates(records=None) -> list[dict]
    The KV read rate two decode rows of one batch show by their difference
    (more context, nothing else), no fit involved.
hardware_from_file(path=None, name="measured") -> Hardware
    A hardware profile whose step costs come from the fit of ``path``; pass it
    wherever a hardware name is accepted (chains, step simulator).
residuals(step_model=None, records=None) -> list[Residual]
    Measured against predicted time for every decode and prefill row
    (``Residual``: kind, batch, context, chunk, prior, measured_s,
    predicted_s, in_fit, and the property ``error`` = predicted/measured - 1).
leave_one_out(records=None) -> list[Residual]
    The same, each row predicted by a fit made without it.
batch_holdout(records=None, max_batch=16) -> list[Residual]
    The decode rows past ``max_batch`` sequences, predicted by a fit to the
    smaller batches and the prefill rows: how far the model reaches.
compare(records=None, hardware="h200", mfu=0.5, step_model=None) -> list[dict]
    Every decode and prefill row: measured, datasheet-roofline and calibrated
    seconds side by side.
swap_vs_recompute(records=None, context_tokens=4096, step_model=None) -> dict
    Per token: swap out and back over the pinned and the pageable link rows,
    against recomputing the token in a prefill of ``context_tokens``.

Every decode and prefill row is predicted as the kind of step it was measured
as: decode rows as CUDA graphs, prefill rows as eager passes (never faster than
the eager launch floor).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from operator import mul
from pathlib import Path
from typing import Any, Iterable

from .calibration import MeasuredRange, StepModel
from .hardware import GB, Hardware
from .transformer import Model

DEFAULT_PATH = Path(__file__).parent / "data" / "h200-llama-3.1-8b-steps.jsonl"
"""The shipped measurements: Llama-3.1-8B shapes on one NVIDIA H200 (2026-11-30)."""

KINDS = ("env", "check", "ceiling", "link", "decode", "prefill", "ablation")
"""Allowed values of the ``kind`` field."""

#: Largest value a step-timing field may hold: far past any real measurement,
#: small enough that the fit's arithmetic stays in float range.
MAX_FIELD_VALUE = 10**15
_POS = "a number in (0, 1e15]"
_INT1 = "an integer in [1, 10**15]"
_INT0 = "an integer in [0, 10**15]"
_REQUIRED: dict[str, dict[str, str]] = {
    "env": {"shape": "an object", "params": _POS, "kv_bytes_per_token": _POS},
    "check": {},
    "ceiling": {"what": "a string", "median_s": _POS},
    "link": {"what": "a string", "pinned": "true or false", "bytes_per_s": _POS},
    "decode": {"batch": _INT1, "context": _INT0, "median_s": _POS},
    "prefill": {"chunk": _INT1, "prior": _INT0, "median_s": _POS},
    "ablation": {"median_s": _POS},
}
_OPTIONAL = {"min_s": _POS, "max_s": _POS, "eager_median_s": _POS, "reps": _INT1,
             "tokens_per_s": _POS, "kv_bytes": _INT0, "bytes_per_s": _POS, "flops_per_s": _POS}
_SHAPE_KEYS = ("layers", "d", "heads", "kv_heads", "head_dim")


def _ok(rule: str, value: Any) -> bool:
    if rule == _POS:  # compared before any float conversion: a 400-digit int is refused, not overflowed
        return (isinstance(value, (int, float)) and not isinstance(value, bool)
                and 0 < value <= MAX_FIELD_VALUE)
    if rule in (_INT1, _INT0):
        return (isinstance(value, int) and not isinstance(value, bool)
                and (rule == _INT0 or value >= 1) and 0 <= value <= MAX_FIELD_VALUE)
    if rule == "a string":
        return isinstance(value, str)
    if rule == "true or false":
        return isinstance(value, bool)
    if rule == "an object":
        return isinstance(value, dict)
    raise AssertionError(rule)  # pragma: no cover


def _check_record(rec: Any, where: str) -> None:
    if not isinstance(rec, dict):
        raise ValueError(f"{where}: must be a JSON object (got {type(rec).__name__})")
    kind = rec.get("kind")
    if kind not in KINDS:
        raise ValueError(f"{where}: field 'kind' must be one of {', '.join(KINDS)} (got {_show(kind)})")
    for field, rule in _REQUIRED[kind].items():
        if field not in rec:
            raise ValueError(f"{where}: field {field!r} is missing ({kind} lines need it)")
        if not _ok(rule, rec[field]):
            raise ValueError(f"{where}: field {field!r} must be {rule} (got {_show(rec[field])})")
    for field, rule in _OPTIONAL.items():
        if field in rec and not _ok(rule, rec[field]):
            raise ValueError(f"{where}: field {field!r} must be {rule} (got {_show(rec[field])})")
    if kind == "env":
        for key in _SHAPE_KEYS:
            v = rec["shape"].get(key)
            if not _ok(_INT1, v):
                raise ValueError(f"{where}: field 'shape.{key}' must be {_INT1} (got {_show(v)})")
    if kind == "ceiling" and "bytes_per_s" not in rec and "flops_per_s" not in rec:
        raise ValueError(f"{where}: field 'bytes_per_s' or 'flops_per_s' is missing (ceiling lines need one)")


def load_records(path: str | Path | None = None) -> list[dict]:
    """Read and validate a step-timing file; return its JSON objects in file order.

    Parameters
    ----------
    path : str or Path, optional
        A JSONL file in the format of :data:`DEFAULT_PATH` (the default).

    Returns
    -------
    list of dict
        One dict per non-blank line.

    Raises
    ------
    ValueError
        One line naming the file, the line number and the field at fault, e.g.
        ``steps.jsonl line 12: field 'median_s' must be a number > 0 (got -1)``;
        also when the file has no ``env`` line or no decode or prefill rows.
    """
    if path is not None and not isinstance(path, (str, Path)):
        raise ValueError(f"path must be a file name (a str or Path) or None (got {_show(path)})")
    p = Path(DEFAULT_PATH if path is None else path)
    records = []
    try:
        f = p.open("rb")
    except OSError as exc:
        shown = str(p) if len(str(p)) <= 160 else "..." + str(p)[-157:]  # the tail holds the file name
        raise ValueError(f"path must name a readable step-timing file (got {shown!r}: {exc.strerror})") from None
    with f:
        for number, raw in enumerate(f, start=1):
            where = f"{p.name} line {number}"
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise ValueError(f"{where}: not UTF-8 text (byte {exc.start + 1})") from None
            if not text.strip():
                continue
            try:
                rec = json.loads(text)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{where}: not valid JSON ({exc.msg} at column {exc.colno})") from None
            except (ValueError, RecursionError) as exc:  # a number past the digit limit, nesting too deep
                reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc).split(":")[0]
                raise ValueError(f"{where}: not valid JSON ({reason})") from None
            _check_record(rec, where)
            records.append(rec)
    kinds = {r["kind"] for r in records}
    if "env" not in kinds:
        raise ValueError(f"{p.name}: field 'kind' has no 'env' line (the model shape is needed)")
    if not {"decode", "prefill"} <= kinds:
        raise ValueError(f"{p.name}: field 'kind' needs both 'decode' and 'prefill' lines")
    return records


def load(path: str | Path | None = None):
    """The validated records of ``path`` as a pandas DataFrame, one row per line.

    Columns are the union of the fields (absent ones NaN) plus ``line``, the
    1-based position among the records.  ``shape`` stays a dict in its cell.
    """
    import pandas as pd

    records = load_records(path)
    return pd.DataFrame([{"line": i + 1, **r} for i, r in enumerate(records)])


def _show(value: Any) -> str:
    from .._checks import show

    return show(value)


def _check_step_model(step_model: Any) -> None:
    from .. import _checks

    _checks.instance("step_model", step_model, StepModel, none_ok=True)


def _records(records: Iterable[dict] | str | Path | None) -> list[dict]:
    if records is None or isinstance(records, (str, Path)):
        return load_records(records)
    from .. import _checks

    items = _checks.sequence("records", records, what="step-timing records (dicts), or a file name")
    for i, rec in enumerate(items):
        _check_record(rec, f"records[{i}]")
    return items


def model_from_records(records: Iterable[dict] | str | Path | None = None) -> Model:
    """The model shape of the file's ``env`` line as a catalogue :class:`Model` (BF16)."""
    env = next(r for r in _records(records) if r["kind"] == "env")
    s = env["shape"]
    bytes_per_param = round(env["kv_bytes_per_token"] / (2 * s["layers"] * s["kv_heads"] * s["head_dim"]))
    return Model(
        name=f"measured-{s['layers']}x{s['d']}",
        params=float(env["params"]),
        layers=s["layers"],
        d_model=s["d"],
        kv_heads=s["kv_heads"],
        head_dim=s["head_dim"],
        bytes_per_param=max(1, bytes_per_param),
        vocab=s.get("vocab", 0),
        source=f"env line of a step-timing file ({env.get('gpu', 'unknown GPU')})",
    )


def link_rates(records: Iterable[dict] | str | Path | None = None) -> dict[str, float]:
    """Host-link bandwidths in bytes/s: ``pinned_out``, ``pinned_back``, ``pageable_out``, ``pageable_back``.

    "out" is device to host (swapping KV out), "back" host to device.  Keys
    whose link row is absent are left out.
    """
    out = {}
    for r in _records(records):
        if r["kind"] == "link":
            mem = "pinned" if r["pinned"] else "pageable"
            way = "out" if r["what"].startswith("device") else "back"
            out[f"{mem}_{way}"] = float(r["bytes_per_s"])
    return out


def ceilings(records: Iterable[dict] | str | Path | None = None) -> dict[str, float]:
    """Measured ceilings: ``copy_bytes_per_s`` (device copy) and ``matmul_flops_per_s``."""
    out = {}
    for r in _records(records):
        if r["kind"] == "ceiling":
            if "flops_per_s" in r:
                out["matmul_flops_per_s"] = float(r["flops_per_s"])
            elif "bytes_per_s" in r:
                out["copy_bytes_per_s"] = float(r["bytes_per_s"])
    return out


def eager_floor_s(records: Iterable[dict] | str | Path | None = None) -> float:
    """Median of the ``eager_median_s`` decode times: the host's kernel-launch floor (s); 0 if none."""
    eager = sorted(r["eager_median_s"] for r in _records(records) if "eager_median_s" in r)
    if not eager:
        return 0.0
    mid = len(eager) // 2
    return eager[mid] if len(eager) % 2 else (eager[mid - 1] + eager[mid]) / 2


def weight_bytes_per_s(records: Iterable[dict] | str | Path | None = None) -> float:
    """Weight-streaming rate (bytes/s): the gate/up GEMV ablation row, else the copy ceiling."""
    recs = _records(records)
    for r in recs:
        if r["kind"] == "ablation" and "bytes_per_s" in r:
            return float(r["bytes_per_s"])
    c = ceilings(recs)
    if "copy_bytes_per_s" in c:
        return c["copy_bytes_per_s"]
    raise ValueError("records need a GEMV ablation row or a device-copy ceiling row (field 'bytes_per_s')")


# ---------------------------------------------------------------------------
# The fit


@dataclass(frozen=True)
class Residual:
    """One measured row against the model.

    ``kind`` is ``"decode"`` or ``"prefill"``; ``batch``/``context`` describe a
    decode row, ``chunk``/``prior`` a prefill row (0 where not applicable).
    ``in_fit`` is False for rows the fit leaves out (eager prefill passes at the
    launch floor).  ``error`` is predicted / measured - 1.
    """

    kind: str
    batch: int
    context: int
    chunk: int
    prior: int
    measured_s: float
    predicted_s: float
    in_fit: bool

    @property
    def error(self) -> float:
        """Relative error, predicted / measured - 1."""
        return self.predicted_s / self.measured_s - 1


_FLOOR_MARGIN = 1.3
"""Prefill rows measured below this multiple of the eager floor are launch-bound: not fitted."""


def _step_rows(recs: list[dict]) -> list[dict]:
    return [r for r in recs if r["kind"] in ("decode", "prefill")]


def _shape(r: dict) -> tuple[int, int, int, int]:
    if r["kind"] == "decode":
        return r["batch"], r["context"], 0, 0
    return 0, 0, r["chunk"], r["prior"]


def _in_fit(r: dict, floor_s: float) -> bool:
    return r["kind"] == "decode" or r["median_s"] > _FLOOR_MARGIN * floor_s


@dataclass(frozen=True)
class _Row:
    """What the fit needs of one timed row: its time, the parts fixed by measured rates, its design entries."""

    t: float  # measured step time (s)
    fixed_s: float  # logits at the matmul ceiling (s)
    flops_s: float  # the body's matmul FLOPs at the matmul ceiling (s)
    tokens: float  # tokens in the step (decoders plus prompt tokens)
    kv_bytes: float  # KV bytes the decoders read
    blocks: float  # attention blocks of the decode (sequences x KV heads)
    chunk_flops: float  # causal attention FLOPs inside the prefill chunk
    prior_flops: float  # attention FLOPs of the chunk to its cached prefix


def _design(rows: list[dict], m: Model, matmul_rate: float) -> list[_Row]:
    pair = m.attention_flops_per_pair
    out = []
    for r in rows:
        b, c, n, p = _shape(r)
        tokens = b + n
        out.append(_Row(
            t=float(r["median_s"]),
            fixed_s=m.head_flops_per_token * (b + (n > 0)) / matmul_rate,
            flops_s=m.body_flops_per_token * tokens / matmul_rate,
            tokens=float(tokens),
            kv_bytes=float(b * c * m.kv_bytes_per_token),
            blocks=float(b * m.kv_heads),
            chunk_flops=pair * n * n / 2,
            prior_flops=pair * n * p,
        ))
    return out


_COLUMNS = ("fixed_s_per_layer", "s_per_token", "kv_bytes_per_s_per_cta",
            "chunk_attention_flops_per_s", "prior_attention_flops_per_s")
"""The linear parameters, in the order of the design columns of :func:`_solve`."""


def _solve(rows: list[_Row], layers: int, weights_s: float, saturate_ctas: float,
           p: float) -> tuple[list[float], float]:
    """Weighted least squares at one (CTA count, overlap exponent); returns the coefficients and the RMS relative error.

    The weight matmuls' time (soft maximum of the weight stream ``weights_s``
    and the FLOPs) and the logits are fixed by the measured rates and moved to
    the left-hand side; the coefficients multiply [layers, tokens, KV bytes per
    block, chunk-pair FLOPs, prior-pair FLOPs]: seconds per layer, per token,
    per byte, per FLOP, per FLOP.  Each row is weighted by 1 / its time
    (relative errors: a 6 ms step counts as much as a 1.5 s one).

    Plain Python floats: the normal equations of the columns scaled to unit
    length (well conditioned here: the scaled columns' condition number is
    below 3 on the shipped file), every sum a correctly rounded
    :func:`math.fsum`, solved by Cholesky in a fixed order.  So the result is
    the same bits on any CPU and any BLAS, which a LAPACK least-squares call
    does not promise.
    """
    cols: list[list[float]] = [[] for _ in _COLUMNS]
    ys = []
    for r in rows:
        hi = max(weights_s, r.flops_s)
        linear = hi * ((weights_s / hi) ** p + (r.flops_s / hi) ** p) ** (1 / p)
        ctas = min(r.blocks, saturate_ctas) if r.blocks > 0 else 1.0
        w = 1 / r.t
        for col, x in zip(cols, (layers, r.tokens, r.kv_bytes / ctas, r.chunk_flops, r.prior_flops)):
            col.append(x * w)
        ys.append((r.t - linear - r.fixed_s) * w)
    # a column no row uses (e.g. no prefill behind a prefix) stays unfitted at 0
    used = [j for j, col in enumerate(cols) if any(col)]
    scale = [math.sqrt(math.fsum(map(mul, cols[j], cols[j]))) for j in used]
    z = [[v / s for v in cols[j]] for j, s in zip(used, scale)]
    a = [[math.fsum(map(mul, zi, zj)) for zj in z] for zi in z]
    b = [math.fsum(map(mul, zi, ys)) for zi in z]
    coef = [0.0] * len(_COLUMNS)
    for j, s, v in zip(used, scale, _cholesky_solve(a, b)):
        coef[j] = v / s
    fitted = [math.fsum(v) for v in zip(*(map(c.__mul__, col) for c, col in zip(coef, cols)))]
    rel = [f - y for f, y in zip(fitted, ys)]  # rows weighted by 1 / time: relative errors
    return coef, math.sqrt(math.fsum(map(mul, rel, rel)) / len(rel))


def _cholesky_solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve ``a x = b`` for a symmetric positive definite ``a`` (the normal equations)."""
    k = len(b)
    low = [[0.0] * k for _ in range(k)]
    for i in range(k):
        for j in range(i + 1):
            s = a[i][j] - math.fsum(low[i][q] * low[j][q] for q in range(j))
            if i == j:
                if s <= 1e-12 * a[i][i]:
                    names = ", ".join(_COLUMNS)
                    raise ValueError("the rows do not determine the step model: the terms "
                                     f"({names}) are not independent over them (add rows of other shapes)")
                low[i][i] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    y = [0.0] * k
    for i in range(k):
        y[i] = (b[i] - math.fsum(low[i][q] * y[q] for q in range(i))) / low[i][i]
    x = [0.0] * k
    for i in reversed(range(k)):
        x[i] = (y[i] - math.fsum(low[q][i] * x[q] for q in range(i + 1, k))) / low[i][i]
    return x


def _golden(f, lo: float, hi: float, iterations: int = 30) -> float:
    """Minimum of a unimodal ``f`` on [lo, hi] by golden-section search."""
    ratio = (5**0.5 - 1) / 2
    a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
    fa, fb = f(a), f(b)
    for _ in range(iterations):
        if fa <= fb:
            hi, b, fb = b, a, fa
            a = hi - ratio * (hi - lo)
            fa = f(a)
        else:
            lo, a, fa = a, b, fb
            b = lo + ratio * (hi - lo)
            fb = f(b)
    return (lo + hi) / 2


def _measured_range(rows: list[dict], m: Model) -> MeasuredRange:
    dec = [r for r in rows if r["kind"] == "decode"]
    pre = [r for r in rows if r["kind"] == "prefill"]

    def span(rs, key):
        vals = [r[key] for r in rs]
        return (min(vals), max(vals)) if vals else (0, 0)

    return MeasuredRange(
        shape=(m.layers, m.d_model, m.kv_heads, m.head_dim),
        decode_batch=span(dec, "batch"),
        decode_context=span(dec, "context"),
        decode_kv_tokens=max((r["batch"] * r["context"] for r in dec), default=0),
        prefill_chunk=span(pre, "chunk"),
        prefill_prior=span(pre, "prior"),
        prefill_tokens=max((r["chunk"] + r["prior"] for r in pre), default=0),
    )


def _fit_rows(rows: list[dict], m: Model, weight_rate: float, matmul_rate: float, floor_s: float,
              source: str) -> StepModel:
    design = _design(rows, m, matmul_rate)
    weights_s = m.weight_bytes / weight_rate

    def rms(log_s: float, log_p: float) -> float:
        return _solve(design, m.layers, weights_s, math.exp(log_s), math.exp(log_p))[1]

    # Two nonlinear parameters: the number of attention blocks (CTAs) that
    # saturate HBM (8 to 2,048) and the overlap exponent p of weight stream
    # and FLOPs (1 to 8).  A coarse log grid over both, then golden-section
    # searches along each in turn around the best grid point.  The five
    # linear parameters come from weighted least squares at each trial.
    s_lo, s_hi, p_lo, p_hi = math.log(8.0), math.log(2048.0), 0.0, math.log(8.0)
    s_grid = [s_lo + (s_hi - s_lo) * i / 32 for i in range(33)]
    p_grid = [p_lo + (p_hi - p_lo) * j / 14 for j in range(15)]
    _, log_s, log_p = min((rms(s, q), s, q) for s in s_grid for q in p_grid)
    ds, dp = s_grid[1] - s_grid[0], p_grid[1] - p_grid[0]
    for _ in range(3):
        log_s = _golden(lambda v: rms(v, log_p), max(log_s - ds, s_lo), min(log_s + ds, s_hi))
        log_p = _golden(lambda v: rms(log_s, v), max(log_p - dp, p_lo), min(log_p + dp, p_hi))
    saturate, p = math.exp(log_s), math.exp(log_p)
    coef, _ = _solve(design, m.layers, weights_s, saturate, p)
    for name, value in zip(_COLUMNS, coef):
        if value < 0:
            raise ValueError(f"the rows give {name} a negative value ({value:.3g}): "
                             "the file does not determine the step model")
    inv = lambda v: float(1 / v) if v > 0 else math.inf  # noqa: E731  (unused column -> infinite rate)
    return StepModel(
        fixed_s_per_layer=float(coef[0]),
        weight_bytes_per_s=float(weight_rate),
        matmul_flops_per_s=float(matmul_rate),
        overlap_exponent=p,
        s_per_token=float(coef[1]),
        kv_bytes_per_s_per_cta=inv(coef[2]),
        kv_ctas_to_saturate=saturate,
        chunk_attention_flops_per_s=inv(coef[3]),
        prior_attention_flops_per_s=inv(coef[4]),
        eager_floor_s=float(floor_s),
        source=source,
        measured_range=_measured_range(rows, m),
    )


def _matmul_rate(recs: list[dict]) -> float:
    c = ceilings(recs)
    if "matmul_flops_per_s" not in c:
        raise ValueError("records need a matrix-product ceiling row (kind 'ceiling', field 'flops_per_s')")
    return c["matmul_flops_per_s"]


def fit_step_model(records: Iterable[dict] | str | Path | None = None) -> StepModel:
    """Fit the calibrated step model to a step-timing file (weighted least squares, standard library only).

    Parameters
    ----------
    records : list of dict, path or None
        Validated records (:func:`load_records`) or a path; the shipped file by default.

    Returns
    -------
    StepModel
        ``weight_bytes_per_s``, ``matmul_flops_per_s`` and ``eager_floor_s``
        are read off the file (GEMV ablation row, matrix-product ceiling row,
        eager decode rows); the nonlinear ``kv_ctas_to_saturate`` and
        ``overlap_exponent`` come from a log grid refined by golden-section
        search; the other five rates and costs from weighted linear least
        squares on relative error over every decode row and every prefill row
        measured above 1.3 x the eager floor.  No row has a parameter of its own.
        ``measured_range`` records the shapes of those rows.

    Raises
    ------
    ValueError
        When the file lacks a ceiling row the fit reads, or its rows drive a
        fitted cost below zero.
    """
    recs = _records(records)
    m = model_from_records(recs)
    floor = eager_floor_s(recs)
    rows = [r for r in _step_rows(recs) if _in_fit(r, floor)]
    env = next(r for r in recs if r["kind"] == "env")
    source = f"least-squares fit to {len(rows)} timed steps on {env.get('gpu', 'a GPU')}"
    return _fit_rows(rows, m, weight_bytes_per_s(recs), _matmul_rate(recs), floor, source)


def kv_read_rates(records: Iterable[dict] | str | Path | None = None) -> list[dict]:
    """The KV read rate the decode rows show by themselves, without any fit.

    Two decode rows with the same batch differ only in context: the same
    tokens, weights and kernels, only more KV cache to read.  For each pair of
    neighbouring contexts at one batch the extra bytes over the extra time is
    the rate at which attention reads the cache.

    Returns
    -------
    list of dict
        ``batch``, ``context_from``, ``context_to``, ``extra_kv_bytes``,
        ``extra_s`` and ``bytes_per_s``, by batch then context.
    """
    recs = _records(records)
    m = model_from_records(recs)
    by_batch: dict[int, list[dict]] = {}
    for r in recs:
        if r["kind"] == "decode":
            by_batch.setdefault(r["batch"], []).append(r)
    out = []
    for batch in sorted(by_batch):
        rows = sorted(by_batch[batch], key=lambda r: r["context"])
        for a, b in zip(rows, rows[1:]):
            extra = batch * (b["context"] - a["context"]) * m.kv_bytes_per_token
            dt = b["median_s"] - a["median_s"]
            out.append({"batch": batch, "context_from": a["context"], "context_to": b["context"],
                        "extra_kv_bytes": extra, "extra_s": dt,
                        "bytes_per_s": extra / dt if dt > 0 else math.inf})
    return out


def _predict(sm: StepModel, m: Model, r: dict) -> float:
    b, c, n, p = _shape(r)
    decode = (b, c) if b else None
    prefills = [(n, p)] if n else []
    return sm.step_s(m, decode=decode, prefills=prefills, eager=r["kind"] == "prefill")


def residuals(step_model: StepModel | None = None,
              records: Iterable[dict] | str | Path | None = None) -> list[Residual]:
    """Measured against predicted step time for every decode and prefill row.

    ``step_model`` defaults to the stored :data:`~lanes.gpu.calibration.H200_LLAMA_8B`
    when ``records`` is the shipped file, else to a fresh fit of ``records``.
    """
    _check_step_model(step_model)
    recs = _records(records)
    if step_model is None:
        from .calibration import H200_LLAMA_8B

        step_model = H200_LLAMA_8B if records is None else fit_step_model(recs)
    m = model_from_records(recs)
    floor = eager_floor_s(recs)
    return [
        Residual(r["kind"], *_shape(r), r["median_s"], _predict(step_model, m, r), _in_fit(r, floor))
        for r in _step_rows(recs)
    ]


def leave_one_out(records: Iterable[dict] | str | Path | None = None) -> list[Residual]:
    """Each fitted row predicted by a fit to all the other rows (rows outside the fit: the full fit).

    The spread of ``error`` here is the honest accuracy to expect on a shape the
    file does not hold but that lies among its shapes.
    """
    recs = _records(records)
    m = model_from_records(recs)
    floor = eager_floor_s(recs)
    rate = weight_bytes_per_s(recs)
    matmul = _matmul_rate(recs)
    rows = _step_rows(recs)
    fitted = [r for r in rows if _in_fit(r, floor)]
    full = fit_step_model(recs)
    out = []
    for r in rows:
        if _in_fit(r, floor):
            sm = _fit_rows([q for q in fitted if q is not r], m, rate, matmul, floor, "leave-one-out")
        else:
            sm = full
        out.append(Residual(r["kind"], *_shape(r), r["median_s"], _predict(sm, m, r), _in_fit(r, floor)))
    return out


def batch_holdout(records: Iterable[dict] | str | Path | None = None, *, max_batch: int = 16) -> list[Residual]:
    """Reach past the fitted batches: fit on decode rows of at most ``max_batch`` sequences, predict the rest.

    The fit keeps every prefill row it would use and drops the decode rows
    with more than ``max_batch`` sequences; those rows are then predicted
    (``in_fit`` False).  A model whose per-token terms hold from prompt tokens
    to decoders' tokens should predict them about as well as it fits them.

    Parameters
    ----------
    records : list of dict, path or None
        The measurements (the shipped file by default).
    max_batch : int
        Largest decode batch kept in the fit (>= 1; at least one decode row must stay).

    Returns
    -------
    list of Residual
        One per held-out decode row, in file order.
    """
    from .. import _checks

    limit = _checks.integer("max_batch", max_batch, lo=1)
    recs = _records(records)
    m = model_from_records(recs)
    floor = eager_floor_s(recs)
    rows = [r for r in _step_rows(recs) if _in_fit(r, floor)]
    kept = [r for r in rows if r["kind"] == "prefill" or r["batch"] <= limit]
    out = [r for r in rows if r["kind"] == "decode" and r["batch"] > limit]
    if not any(r["kind"] == "decode" for r in kept) or not out:
        batches = sorted({r["batch"] for r in rows if r["kind"] == "decode"})
        raise ValueError(f"max_batch must keep some decode rows in the fit and leave some out "
                         f"(the rows have batches {batches}; got {limit})")
    sm = _fit_rows(kept, m, weight_bytes_per_s(recs), _matmul_rate(recs), floor, f"decode batches <= {limit}")
    return [Residual(r["kind"], *_shape(r), r["median_s"], _predict(sm, m, r), False) for r in out]


def compare(records: Iterable[dict] | str | Path | None = None, *, hardware: str | Hardware = "h200",
            mfu: float = 0.5, step_model: StepModel | None = None) -> list[dict]:
    """Measured, roofline and calibrated time for every decode and prefill row.

    Parameters
    ----------
    records : list of dict, path or None
        The measurements (the shipped file by default).
    hardware : str or Hardware
        The datasheet profile for the roofline column (``"h200"``).
    mfu : float
        MFU of the roofline's compute term.
    step_model : StepModel, optional
        Calibrated model (default: stored for the shipped file, else fitted).

    Returns
    -------
    list of dict
        Keys ``kind, batch, context, chunk, prior, tokens, measured_s,
        roofline_s, calibrated_s``; ``tokens`` is tokens produced (decode) or
        processed (prefill) by the step.
    """
    from .hardware import get_hardware
    from .steps import step_cost

    recs = _records(records)
    h = hardware if isinstance(hardware, Hardware) else get_hardware(hardware)
    m = model_from_records(recs)
    res = residuals(step_model, None if records is None else recs)
    out = []
    for r in res:
        seqs = [(r.context, 1)] * r.batch if r.kind == "decode" else [(r.prior, r.chunk)]
        out.append({
            "kind": r.kind, "batch": r.batch, "context": r.context, "chunk": r.chunk, "prior": r.prior,
            "tokens": r.batch or r.chunk, "measured_s": r.measured_s,
            "roofline_s": step_cost(seqs, model=m, hardware=h, mfu=mfu).duration_s,
            "calibrated_s": r.predicted_s,
        })
    return out


def swap_vs_recompute(records: Iterable[dict] | str | Path | None = None, *, context_tokens: int = 4096,
                      step_model: StepModel | None = None) -> dict[str, dict[str, float]]:
    """Swap a token's KV out and back over the measured links, or recompute it?

    Returns
    -------
    dict
        For ``"pinned"`` and ``"pageable"`` host memory (where both link rows
        exist): ``swap_s_per_token`` (KV bytes / out rate + KV bytes / back
        rate), ``recompute_s_per_token`` (a calibrated graph prefill of
        ``context_tokens``, per token) and ``recompute_over_swap``.
    """
    _check_step_model(step_model)
    from .. import _checks

    context_tokens = _checks.integer("context_tokens", context_tokens, lo=1, hi=MAX_FIELD_VALUE)
    recs = _records(records)
    m = model_from_records(recs)
    if step_model is None:
        from .calibration import H200_LLAMA_8B

        step_model = H200_LLAMA_8B if records is None else fit_step_model(recs)
    links = link_rates(recs)
    recompute = step_model.step_s(m, prefills=[(context_tokens, 0)]) / context_tokens
    out = {}
    for mem in ("pinned", "pageable"):
        if f"{mem}_out" in links and f"{mem}_back" in links:
            swap = m.kv_bytes_per_token / links[f"{mem}_out"] + m.kv_bytes_per_token / links[f"{mem}_back"]
            out[mem] = {"swap_s_per_token": swap, "recompute_s_per_token": recompute,
                        "recompute_over_swap": recompute / swap}
    return out


def hardware_from_file(path: str | Path | None = None, *, name: str = "measured",
                       memory_bytes: float | None = None) -> Hardware:
    """A hardware profile calibrated on ``path`` (the shipped file by default).

    The roofline fields hold the file's measured ceilings (device copy, matrix
    product); ``memory_bytes`` comes from the env line unless given.  Step
    costs use the fitted :class:`StepModel`.
    """
    recs = load_records(path)
    env = next(r for r in recs if r["kind"] == "env")
    sm = fit_step_model(recs)
    c = ceilings(recs)
    mem = memory_bytes if memory_bytes is not None else float(env.get("memory_bytes", 80 * GB))
    return Hardware(
        name=name,
        hbm_bytes_per_s=c.get("copy_bytes_per_s", sm.weight_bytes_per_s),
        bf16_flops_per_s=c.get("matmul_flops_per_s", sm.matmul_flops_per_s),
        memory_bytes=mem,
        source=sm.source,
        calibration=sm,
    )


__all__ = [
    "DEFAULT_PATH", "KINDS", "Residual", "batch_holdout", "ceilings", "compare", "eager_floor_s", "fit_step_model",
    "hardware_from_file", "kv_read_rates", "leave_one_out", "link_rates", "load", "load_records",
    "model_from_records", "residuals", "swap_vs_recompute", "weight_bytes_per_s",
]
