"""Arrival streams: the diurnal rate curve and the seeded random draws.

The draws do not depend on the scheduling policy, so one :class:`ArrivalStream`
is drawn per scenario and shared by every policy compared on it.  The draw
order matches the anchor program exactly: first the backlog's service times,
then, for each one-second tick, one uniform number that fixes how many
interactive requests arrive (inverse-CDF Poisson) followed by one service time
per arrival.
"""

from __future__ import annotations

import math
import random
import re
from array import array
from collections import Counter
from bisect import bisect_right
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import accumulate, chain, compress, islice, repeat
from operator import add, mul, sub
from typing import Callable, Iterable

from .. import _checks
from . import scenario as _limits
from .scenario import Scenario


def rate_curve(scenario: Scenario) -> list[float]:
    """The scenario's interactive arrival rate at every tick, in requests per second.

    A raised cosine over the simulated window: ``trough_rate`` at t = 0,
    ``peak_rate`` halfway through, back to the trough at the end.
    """
    _checks.instance("scenario", scenario, Scenario)
    _refuse_long("rate_curve lists one rate per tick", scenario)
    return _rates(scenario.trough_rate, scenario.peak_rate, scenario.ticks)


def rate_per_s(scenario: Scenario, t: float) -> float:
    """The scenario's interactive arrival rate at time ``t`` seconds, in requests per second."""
    _checks.instance("scenario", scenario, Scenario)
    t = _checks.number("t", t)
    return _rates(scenario.trough_rate, scenario.peak_rate, scenario.ticks, (t,))[0]


def _rates(lo: float, hi: float, ticks: int, times: Iterable[float] | None = None) -> list[float]:
    """The raised cosine at each of ``times`` (default: every tick), requests per second."""
    span, tau, cos = hi - lo, 2 * math.pi, math.cos
    return [lo + span * (1 - cos(tau * t / ticks)) / 2 for t in (range(ticks) if times is None else times)]


#: Terms summed before a Poisson draw gives up; reached only when rounding
#: keeps the summed probability below ``u`` for good.
_MAX_POISSON_TERMS = 10_000
_exp = math.exp


def poisson_count(lam: float, u: float) -> int:
    """Number of arrivals in one tick: the Poisson(``lam``) quantile of ``u``.

    Adds the probability mass term by term, from k = 0, until the running
    total reaches ``u``.
    """
    return _poisson_count(_checks.number("lam", lam, lo=0), _checks.number("u", u))


def _poisson_count(lam: float, u: float) -> int:
    """:func:`poisson_count` without the checks, for the drawing loops."""
    term = cum = _exp(-lam)
    if u <= cum:
        return 0
    for k in range(1, _MAX_POISSON_TERMS):
        term *= lam / k
        cum += term
        if u <= cum:
            return k
    return _MAX_POISSON_TERMS


# --- drawing many numbers at once ---------------------------------------------------
#
# CPython's Mersenne Twister hands out 32-bit words, and every call the anchor
# program makes is a fixed recipe over the next words:
#
# * ``rng.random()`` takes two words a, b and returns
#   ``((a >> 5) * 2**26 + (b >> 6)) / 2**53``;
# * ``rng.randint(lo, hi)`` with ``n = hi - lo + 1`` and ``k = n.bit_length()``
#   takes one word w, keeps its top k bits ``w >> (32 - k)``, and accepts them if
#   they are below n (``lo`` plus them is the draw); otherwise it takes the next
#   word and tries again;
# * ``rng.getrandbits(32 * m)`` returns the next m words at once, the first in
#   the lowest 32 bits.
#
# So ``getrandbits`` calls yield the words a stretch of ticks needs, and which
# words a randint accepts, and the values there, can be worked out for all of
# them with a few C-level passes (bytes.translate, itertools.compress) instead
# of a Python call per draw.  What stays a Python loop is the walk over ticks
# (:meth:`_TickDraws.ticks`): where tick t's uniform number sits depends on how
# many words tick t - 1 used.  The walk can stop after any tick and go on
# later from the same place, so a long window is drawn a stretch at a time.
# :func:`_words_agree` checks these recipes against the library once per
# process; if they ever disagree, the draws fall back to the library's calls.


class _Words:
    """The 32-bit words of one generator, drawn ahead, and where a randint accepts.

    ``words[i]`` is the i-th output of ``rng``; more are drawn on demand.
    """

    def __init__(self, rng: random.Random, n: int) -> None:
        self.rng = rng
        self.raw = b""
        self.words: memoryview | list[int] = []
        self.more(n)

    def more(self, n: int) -> None:
        """Draw ``n`` more words from the generator.

        In pieces of at most ``_WORDS_PER_CALL`` words: ``getrandbits`` takes a
        C int of bits, which overflows past about 67 million words.  Successive
        calls continue the same stream, so the words are the same either way.
        """
        pieces = []
        while n > 0:
            m = min(n, _WORDS_PER_CALL)
            pieces.append(self.rng.getrandbits(32 * m).to_bytes(4 * m, "little"))
            n -= m
        chunk = b"".join(pieces)
        self.raw = self.raw + chunk if self.raw else chunk
        # A view of the bytes as 32-bit words: no copy where the machine is little-endian.
        self.words = memoryview(self.raw).cast("I") if _NATIVE_WORDS else _unpack(self.raw)

    def __len__(self) -> int:
        return len(self.raw) // 4

    def drop(self, n: int) -> None:
        """Forget the first ``n`` words (used already): word ``n`` becomes word 0."""
        if n:
            self.raw = self.raw[4 * n :]
            self.words = memoryview(self.raw).cast("I") if _NATIVE_WORDS else _unpack(self.raw)

    def accepted(self, lo: int, hi: int, start: int, stop: int) -> tuple[bytes, bytes | list[int]]:
        """Where ``randint(lo, hi)`` accepts among words ``[start, stop)``, and what it returns.

        Returns ``ok``, one byte per word (1 if accepted, else 0), and the
        values drawn at the accepted words, in order.
        """
        n = hi - lo + 1
        k = n.bit_length()
        if k <= 8 and hi < 256:
            # Only the top byte b of a word matters: the draw is b >> (8 - k),
            # accepted when b < n << (8 - k).  Two 256-entry tables map b to
            # "accepted?" and to the value, and bytes.translate applies them
            # to every word at C speed.
            top = self.raw[4 * start + 3 : 4 * stop : 4]
            same, cut = 1 << (8 - k), n << (8 - k)
            ok = top.translate(b"\x01" * cut + b"\x00" * (256 - cut))
            value = top.translate(bytes([v for v in range(lo, hi + 1) for _ in range(same)]) + bytes(256 - cut))
            return ok, bytes(compress(value, ok))  # values below 256: one byte each
        top_bits = [w >> (32 - k) for w in self.words[start:stop]]
        ok = bytes(map(n.__gt__, top_bits))
        return ok, [lo + v for v in compress(top_bits, ok)]


def _unpack(raw: bytes) -> list[int]:
    return [int.from_bytes(raw[i : i + 4], "little") for i in range(0, len(raw), 4)]


_NATIVE_WORDS = array("I").itemsize == 4 and array("I", b"\x01\x00\x00\x00")[0] == 1


class _Skips(dict):
    """``skips[k]`` matches, in ``ok`` bytes, the words that k accepted draws use.

    ``skips[k](ok, p).end()`` is the position just after the k-th accepted word
    at or after ``p`` (the rejected words in between are skipped); the match
    is ``None`` when the words run out first.  Compiled on first use.
    """

    def __missing__(self, k: int) -> Callable:
        match = self[k] = re.compile(b"(?:\\x00*\\x01){%d}" % k).match
        return match


_skip = _Skips()

#: Most words one ``getrandbits`` call draws (2**30 bits, well inside a C int).
_WORDS_PER_CALL = 1 << 25


def _after(ok: bytes, start: int, k: int) -> int:
    """The position just after the k-th accepted word at or after ``start`` (k >= 1).

    Same answer as ``_skip[k](ok, start).end()``, found by bisecting on
    ``bytes.count`` so that a backlog of millions needs no regex state per job.
    Raises ``LookupError`` when fewer than k words are accepted.
    """
    if k <= 64:
        m = _skip[k](ok, start)
        if m is None:
            raise LookupError(k)
        return m.end()
    lo, hi = start, len(ok)
    if ok.count(1, start, hi) < k:
        raise LookupError(k)
    while lo < hi:  # smallest end with k accepted words in ok[start:end]
        mid = (lo + hi) // 2
        if ok.count(1, start, mid) >= k:
            hi = mid
        else:
            lo = mid + 1
    return lo


def _draw_with_words(
    rng: random.Random,
    rates: list[float],
    n_backlog: int,
    batch_service_s: tuple[int, int],
    inter_service_s: tuple[int, int],
) -> tuple[list[int], list[int], list[int]]:
    """The backlog, the arrivals per tick and their service times, from words drawn ahead."""
    piece = _PIECE_TICKS
    draws = _TickDraws(rng, n_backlog, batch_service_s, inter_service_s, words=True, rates=rates[:piece])
    counts: list[int] = []
    service: list[int] = []
    for t0 in range(0, len(rates), piece):  # in pieces, so the words ahead stay few
        more_counts, more_service = draws.ticks(rates[t0 : t0 + piece])
        counts += more_counts
        service += more_service
    return draws.backlog, counts, service


#: Ticks drawn per call of :meth:`_TickDraws.ticks` when a whole window is drawn.
_PIECE_TICKS = 1 << 13


#: Slack on the tables' partial sums: far above the rounding of the sums
#: themselves (a few ulps of 1), far below the width of a word's interval.
_SLACK = 1e-11


def _poisson_tables(lam_lo: float, lam_hi: float) -> tuple[list[int], list[int]]:
    """Word thresholds that fix a tick's Poisson count for every rate in ``[lam_lo, lam_hi]``.

    A tick's uniform number is ``u = ((a >> 5) * 2**26 + (b >> 6)) / 2**53`` for
    its two words a, b, so the first word alone puts ``u`` in an interval of
    width 2**-27.  The count is the number of partial sums ``cum_i`` (summed
    exactly as :func:`_poisson_count` sums them) below ``u``; each ``cum_i``
    falls as the rate rises.  ``k = bisect_right(sure, a)`` counts the sums
    below ``u`` at every rate of the range; if also ``a < maybe[k]``, sum k is
    at or above ``u`` at every rate, so k is the count.  Otherwise (a word
    near a threshold, or beyond the tables: ``maybe`` ends with 0) the caller
    sums the terms at the tick's own rate.
    """
    sure, maybe = [], []
    for lam, out, sign in ((lam_lo, sure, 1), (lam_hi, maybe, -1)):
        term = cum = _exp(-lam)
        k = 0
        while True:
            x = (cum + sign * _SLACK) * 134217728.0  # in units of 2**-27
            out.append((math.floor(x) + 1) << 5 if sign > 0 else math.floor(x) << 5)
            if cum > 0.9999995 or k >= _MAX_POISSON_TERMS - 1:
                break
            k += 1
            term *= lam / k
            cum += term
    n = min(len(sure), len(maybe))
    return sure[:n], maybe[:n] + [0]


class _RateCurve:
    """Ticks ``[t0, t1)`` of the raised cosine over a window of ``ticks`` ticks, as a sequence of rates.

    ``curve[i]`` is the rate at tick ``t0 + i`` in requests per second, the
    same number :func:`_rates` gives; nothing is stored per tick.
    """

    def __init__(self, lo: float, hi: float, ticks: int, t0: int, t1: int) -> None:
        self.lo, self.hi, self.ticks, self.t0, self.t1 = lo, hi, ticks, t0, t1
        self.span = hi - lo

    def __len__(self) -> int:
        return self.t1 - self.t0

    def __getitem__(self, i: int) -> float:
        t = self.t0 + i
        return self.lo + self.span * (1 - math.cos(2 * math.pi * t / self.ticks)) / 2  # as in _rates

    def __iter__(self):
        return iter(_rates(self.lo, self.hi, self.ticks, range(self.t0, self.t1)))

    def bounds(self, i0: int, i1: int) -> tuple[float, float]:
        """Least and greatest rate over ``curve[i0:i1]``.

        The curve rises to the middle of the window and falls after it, so
        both are at an end of the stretch or at the middle (rounding may
        put a neighbour an ulp beyond: the tables' slack covers that).
        """
        a, b = self.t0 + i0, self.t0 + i1 - 1
        ts = {a, b} | {m for m in (self.ticks // 2, (self.ticks + 1) // 2) if a <= m <= b}
        rates = [self[t - self.t0] for t in ts]
        return min(rates), max(rates)

    def most_arrivals(self) -> float:
        """At least the arrivals expected over the stretch."""
        return len(self) * self.bounds(0, len(self))[1] if len(self) else 0.0

    def block_ticks(self) -> int:
        """Ticks per pair of tables (see :func:`_block_ticks`), from the curve's steepest slope."""
        slope = self.span * math.pi / self.ticks
        if slope <= 12 / 8192**2:  # flat, or so nearly flat that 12 / slope would overflow
            return 8192
        return max(32, min(8192, int((12 / slope) ** 0.5)))


def _list_bounds(rates: list[float]) -> Callable[[int, int], tuple[float, float]]:
    def bounds(i0: int, i1: int) -> tuple[float, float]:
        block = rates[i0:i1]
        return min(block), max(block)

    return bounds


def _by_top_byte(sure: list[int], maybe: list[int]) -> list[int]:
    """The count :func:`_poisson_tables` fixes for every word with this top byte, or -1.

    Entry b is k when every word from ``b << 24`` to ``((b + 1) << 24) - 1``
    has ``bisect_right(sure, a) == k`` and ``a < maybe[k]``: the words with
    that k form the interval ``[sure[k - 1], min(sure[k], maybe[k]))``, and
    the bytes wholly inside it get k.  The rest (about one byte per
    threshold) are -1: the caller bisects on the whole word.
    """
    table = [-1] * 256
    lo = 0
    for k, (s, m) in enumerate(zip(sure, maybe)):
        hi = min(s, m)  # words in [lo, hi) give k for sure
        first, stop = max(0, (lo + 0xFFFFFF) >> 24), min(256, hi >> 24)
        if stop > first:
            table[first:stop] = [k] * (stop - first)
        lo = s
    return table


def _block_ticks(rates: list[float]) -> int:
    """Ticks per pair of tables: long where the rate barely moves, short where it moves fast.

    A pair of tables costs about as much as a dozen exact sums, and a tick
    needs one when its word falls where the block's rates disagree, a share
    of about the rate's change over the block.
    """
    if len(rates) < 2:
        return 64
    slope = (max(rates) - min(rates)) / len(rates)
    if slope <= 12 / 8192**2:  # flat, or so nearly flat that 12 / slope would overflow
        return 8192
    return max(32, min(8192, int((12 / slope) ** 0.5)))


#: ``_PLACES[i]`` is i: int objects made once and shared, so that listing the
#: places of accepted words (:func:`_places_after`) allocates none per word.
_PLACES: list[int] = []


#: Most places kept in :data:`_PLACES` (about 9 MB); longer buffers count afresh.
_MAX_PLACES = 1 << 18


def _places_after(ok: bytes) -> list[int]:
    """The place just after each accepted word, leaving out the last two words (see :class:`_TickDraws`)."""
    n = len(ok)
    if n < 3:
        return []
    if n > _MAX_PLACES:
        return list(compress(range(1, n - 1), ok[: n - 2]))
    if len(_PLACES) < n:
        _PLACES.extend(range(len(_PLACES), min(_MAX_PLACES, n + n // 2)))
    return list(compress(islice(_PLACES, 1, n - 1), ok[: n - 2]))


class _TickDraws:
    """The generator's draws in the anchor program's order, read a stretch of ticks at a time.

    The backlog's service times are drawn first (:attr:`backlog`); each call
    of :meth:`ticks` then draws the next ticks, continuing where the last call
    stopped, so drawing a window in pieces gives the same numbers as drawing
    it whole.  Words already used are dropped, so memory stays bounded by one
    piece.  ``words=False`` makes the library's own calls instead (the same
    numbers, one call at a time).
    """

    def __init__(
        self,
        rng: random.Random,
        n_backlog: int,
        batch_service_s: tuple[int, int],
        inter_service_s: tuple[int, int],
        *,
        words: bool,
        rates: list[float] | None = None,
    ) -> None:
        self.rng = rng
        self.inter_service_s = inter_service_s
        self.use_words = words
        if not words:
            self.backlog = [rng.randint(*batch_service_s) for _ in range(n_backlog)]
            return
        blo, bhi = batch_service_s
        bn = bhi - blo + 1
        # Words expected: a randint uses 2**k / n words on average, a uniform two.
        # A few percent spare; more are drawn if they run out.
        for_backlog = int(1.02 * n_backlog * (1 << bn.bit_length()) / bn) + 64
        words_ = _Words(rng, for_backlog + (self._expect(rates) if rates else 0))
        while True:  # the backlog: the first n_backlog accepted draws
            ok, values = words_.accepted(blo, bhi, 0, for_backlog)
            if len(values) >= n_backlog:
                break
            words_.more(for_backlog)
            for_backlog *= 2
        p = _after(ok, 0, n_backlog) if n_backlog else 0
        self.backlog = list(values[:n_backlog])
        self._words = words_
        # From word p on: ok[i] says whether word p + i would be accepted,
        # values[r] is the value of the r-th accepted word and at[r] the place
        # after it (the last two words left out, so a tick that ends at an
        # accepted word leaves two words for the next one's uniform number).
        self._p = p
        self._ok, self._values = words_.accepted(*inter_service_s, p, len(words_))
        self._top = words_.raw[4 * p + 3 :: 4]  # each word's top byte
        self._at = _places_after(self._ok)
        self._q = self._j = 0

    def _expect(self, rates: "list[float] | _RateCurve") -> int:
        """Words the ticks at ``rates`` should need, with a few percent spare."""
        ilo, ihi = self.inter_service_s
        n = ihi - ilo + 1
        total = rates.most_arrivals() if isinstance(rates, _RateCurve) else sum(rates)
        return int(2 * len(rates) + 1.05 * total * (1 << n.bit_length()) / n) + 64

    def _more(self, n: int) -> None:
        """Drop the words used so far and draw ``n`` more (plus a few)."""
        words_, q = self._words, self._q
        words_.drop(self._p + q)
        self._ok, self._values, self._top = self._ok[q:], self._values[self._j :], self._top[q:]
        old = len(words_)
        words_.more(n + 64)
        self._top += words_.raw[4 * old + 3 :: 4]
        more_ok, more_values = words_.accepted(*self.inter_service_s, old, len(words_))
        self._ok += more_ok
        self._values = self._values + more_values
        self._at = _places_after(self._ok)
        self._p = self._q = self._j = 0

    def _refill(self, q: int, j: int, n: int) -> tuple:
        """Keep the walk's places ``q`` and ``j``, draw ``n`` more words (:meth:`_more`) and
        return what the walk reads, from the new first word: ``ok``, ``at``, ``values``, the
        words, the top bytes and ``len(ok)``."""
        self._q, self._j = q, j
        self._more(n)
        return self._ok, self._at, self._values, self._words.words, self._top, len(self._ok)

    def ticks(self, rates: "list[float] | _RateCurve") -> tuple[list[int], list[int]]:
        """Draw the next ``len(rates)`` ticks at these rates (requests per second).

        ``rates`` is a list, or a :class:`_RateCurve` (a stretch of the raised
        cosine, whose rates are worked out only where a tick needs its own).
        Returns the arrivals at each tick and the service time of each
        arrival, seconds, in order.

        The walk over ticks is the one Python loop left; it keeps two places,
        q (the word where the tick starts) and j (the accepted words before
        q).  A tick takes two words for its uniform number, of which d = 0, 1
        or 2 happen to be acceptable randint words, then its k arrivals take
        the next k accepted words: the tick ends just after accepted word
        j + d + k - 1, and those k values are its service times.  The
        first word alone fixes k for nearly every tick (see
        :func:`_poisson_tables`); the sum over terms is made only near a
        threshold.
        """
        if not self.use_words:
            uniform, randint, lo, hi = self.rng.random, self.rng.randint, *self.inter_service_s
            counts: list[int] = []
            service: list[int] = []
            for lam in rates:
                k = _poisson_count(lam, uniform())
                counts.append(k)
                service += [randint(lo, hi) for _ in range(k)]
            return counts, service
        want = self._expect(rates)
        if len(self._ok) - self._q < want:
            self._more(want)
        counts = []
        service = bytearray() if type(self._values) is bytes else []
        append = counts.append
        tables = _poisson_tables
        br = bisect_right
        q, j = self._q, self._j
        ok, at, values, w, top = self._ok, self._at, self._values, self._words.words[self._p :], self._top
        n_ok = len(ok)
        n_ticks = len(rates)
        if isinstance(rates, _RateCurve):
            step, bounds, rate = rates.block_ticks(), rates.bounds, rates.__getitem__
        else:
            step, bounds, rate = _block_ticks(rates), _list_bounds(rates), rates.__getitem__
        for b0 in range(0, n_ticks, step):
            b1 = min(b0 + step, n_ticks)
            sure, maybe = tables(*bounds(b0, b1))
            by_top = _by_top_byte(sure, maybe)
            if q + 2 > n_ok:  # out of words: draw more
                ok, at, values, w, top, n_ok = self._refill(q, j, 8 + self._expect(rates) // 4)
                q = j = 0
            # Each tick starts with two words left (q + 2 <= n_ok): ``at`` leaves
            # out the last two, and the k = 0 branch checks for itself.
            for t in range(b0, b1):
                k = by_top[top[q]]  # the first word's top byte alone, for most ticks
                if k < 0:
                    a = w[q]
                    k = br(sure, a)
                    if a >= maybe[k]:  # near a threshold: sum at this tick's rate
                        lam = rate(t)
                        u = ((a >> 5) * 67108864.0 + (w[q + 1] >> 6)) * (1.0 / 9007199254740992.0)
                        # Poisson(lam) by inverse CDF, term by term, as the anchor program does.
                        if u < 0.999999:
                            k = 0
                            term = cum = _exp(-lam)
                            while u > cum:
                                k += 1
                                term *= lam / k
                                cum += term
                        else:  # so close to 1 that rounding may stop the sum short of u
                            k = _poisson_count(lam, u)
                d = ok[q] + ok[q + 1]  # the uniform's words that randint would accept
                append(k)
                if k:  # the tick's service times: the next k accepted words
                    j += d
                    try:
                        q = at[j + k - 1]  # just after the last of them
                    except IndexError:  # not enough accepted words ahead: draw more
                        while True:
                            ok, at, values, w, top, n_ok = self._refill(q, j - d, 8 * k + self._expect(rates) // 4)
                            q = 0
                            j = ok[0] + ok[1]
                            if j + k <= len(at):
                                break
                        q = at[j + k - 1]
                    service += values[j : j + k]
                    j += k
                else:
                    j += d
                    q += 2
                    if q + 2 > n_ok:  # out of words: draw more
                        ok, at, values, w, top, n_ok = self._refill(q, j, 8 + self._expect(rates) // 4)
                        q = j = 0
        self._q, self._j = q, j
        return counts, list(service) if type(service) is bytearray else service




def _draw_with_calls(
    rng: random.Random,
    rates: list[float],
    n_backlog: int,
    batch_service_s: tuple[int, int],
    inter_service_s: tuple[int, int],
) -> tuple[list[int], list[int], list[int]]:
    """The same draws as :func:`_draw_with_words`, one library call at a time."""
    uniform, randint = rng.random, rng.randint
    backlog = [randint(*batch_service_s) for _ in range(n_backlog)]
    counts: list[int] = []
    service: list[int] = []
    for lam in rates:
        k = _poisson_count(lam, uniform())
        counts.append(k)
        service += [randint(*inter_service_s) for _ in range(k)]
    return backlog, counts, service


def _words_agree() -> bool:
    """True when this interpreter's generator follows the recipes above."""
    try:
        rates = [0.5, 3.0, 0.0, 7.5] * 2
        for seed, ranges in ((20261129, ((4, 12), (60, 180))), (7, ((1, 1), (0, 1000))), (3, ((7, 8), (0, 255)))):
            a = _draw_with_words(random.Random(seed), rates, 10, *ranges)
            b = _draw_with_calls(random.Random(seed), rates, 10, *ranges)
            if a != b:
                return False
        return True
    except Exception:  # pragma: no cover - an interpreter unlike CPython
        return False


_WORDS_OK: bool | None = None  # checked on the first draw


@dataclass(frozen=True)
class ArrivalStream:
    """Everything random in one run of a scenario.

    Attributes
    ----------
    batch_service_s : tuple of int
        Slot time of each backlog job, in queue order, seconds.
    arrival_tick : tuple of int
        Tick (second) of each interactive arrival, non-decreasing.
    inter_service_s : tuple of int
        Slot time of each interactive arrival, seconds.
    arrived_by : tuple of int
        ``arrived_by[t]`` is the number of arrivals with tick <= t.
    zero_wait_end : tuple of int
        ``arrival_tick + inter_service_s`` per arrival: the tick its slot frees
        if it is admitted the moment it arrives.
    zero_wait_ends_at : tuple of int
        ``zero_wait_ends_at[t]`` counts arrivals whose ``zero_wait_end`` is ``t``
        (length ``ticks + max interactive service + 1``).  The simulator starts
        from this histogram and corrects it only for requests that wait.
    """

    batch_service_s: tuple[int, ...]
    arrival_tick: tuple[int, ...]
    inter_service_s: tuple[int, ...]
    arrived_by: tuple[int, ...]
    zero_wait_ends_at: tuple[int, ...]

    @property
    def n_arrivals(self) -> int:
        """Interactive requests that arrive in the window."""
        return len(self.arrival_tick)

    @cached_property
    def zero_wait_end(self) -> tuple[int, ...]:
        """``arrival_tick + inter_service_s`` per arrival: the tick its slot frees
        if it is admitted the moment it arrives (computed on first use)."""
        return tuple(map(add, self.arrival_tick, self.inter_service_s))

    @cached_property
    def total_service_s(self) -> int:
        """Slot seconds all interactive arrivals ask for, summed once per stream."""
        return sum(self.inter_service_s)

    @cached_property
    def arrivals_per_tick(self) -> list[int]:
        """Interactive requests arriving at each tick."""
        return list(map(sub, self.arrived_by, chain((0,), self.arrived_by)))

    @cached_property
    def zero_wait_busy(self) -> tuple[int, ...]:
        """Interactive requests in slots at each tick if every one got a slot on arrival.

        Arrived so far, less those whose ``zero_wait_end`` has come (one entry
        per tick).  When a policy evicts batch for interactive work and this
        never exceeds the pool, no request ever waits, and the engine can
        take the interactive side from here instead of simulating it.
        """
        ended = accumulate(self.zero_wait_ends_at[: len(self.arrived_by)])
        return tuple(map(sub, self.arrived_by, ended))


def _refuse_long(what: str, scenario: Scenario) -> None:
    """Refuse a call that keeps something per tick or per arrival for a long window."""
    if scenario.is_long:
        raise ValueError(
            f"hours: {what}, so the window must be at most {_limits.MAX_SERIES_HOURS} h "
            f"and expect at most {_limits.MAX_SERIES_ARRIVALS} interactive arrivals (got hours={_checks.show(scenario.hours)}, "
            f"{scenario.expected_arrivals:.0f} expected); lanes.run_table and lanes.simulate summarise longer windows"
        )


def draw_stream(scenario: Scenario) -> ArrivalStream:
    """Draw the backlog and the interactive arrivals for ``scenario``.

    The draws depend only on the seed, the window, the backlog, the service
    ranges and the rates, never on the pool size, the preemption cost or the
    policy; the last few streams are kept, so an explorer that moves one of
    those knobs re-uses its draws.  The stream holds every arrival, so the
    window may not be a long one (:attr:`Scenario.is_long`).
    """
    _checks.instance("scenario", scenario, Scenario)
    _refuse_long("draw_stream keeps every arrival", scenario)
    return _draw(
        scenario.seed,
        scenario.ticks,
        scenario.backlog,
        scenario.batch_service_s,
        scenario.inter_service_s,
        scenario.trough_rate,
        scenario.peak_rate,
    )


def _use_words() -> bool:
    """True when the fast word recipes may be used (checked once per process)."""
    global _WORDS_OK
    if _WORDS_OK is None:
        _WORDS_OK = _words_agree()
    return _WORDS_OK


@lru_cache(maxsize=8)
def _draw(
    seed: int,
    ticks: int,
    n_backlog: int,
    batch_service_s: tuple[int, int],
    inter_service_s: tuple[int, int],
    trough_rate: float,
    peak_rate: float,
) -> ArrivalStream:
    rng = random.Random(seed)
    if not _use_words():
        rates = _rates(trough_rate, peak_rate, ticks)
        backlog, counts, service = _draw_with_calls(rng, rates, n_backlog, batch_service_s, inter_service_s)
        return _stream_from(backlog, counts, service, inter_service_s[1])
    # As _draw_with_words, over the curve itself: a tick's rate is worked out only where it is needed.
    piece = _PIECE_TICKS
    curve = _RateCurve(trough_rate, peak_rate, ticks, 0, min(ticks, piece))
    draws = _TickDraws(rng, n_backlog, batch_service_s, inter_service_s, words=True, rates=curve)
    counts: list[int] = []
    service: list[int] = []
    for t0 in range(0, ticks, piece):
        more_counts, more_service = draws.ticks(_RateCurve(trough_rate, peak_rate, ticks, t0, min(ticks, t0 + piece)))
        counts += more_counts
        service += more_service
    return _stream_from(draws.backlog, counts, service, inter_service_s[1])


def _stream_from(backlog: list[int], counts: list[int], service: list[int], max_service_s: int) -> ArrivalStream:
    """The :class:`ArrivalStream` of drawn numbers: backlog, arrivals per tick, their service times.

    The window is ``len(counts)`` ticks; ``max_service_s`` is the longest
    interactive service time the draws allow, seconds.
    """
    ticks = len(counts)
    when = tuple(chain.from_iterable(map(repeat, range(ticks), counts)))
    ends_at = [0] * (ticks + max_service_s + 1)
    for end, n in Counter(map(add, when, service)).items():
        ends_at[end] = n
    return ArrivalStream(
        tuple(backlog), when, tuple(service), tuple(accumulate(counts)), tuple(ends_at)
    )


draw_stream.cache_clear = _draw.cache_clear  # type: ignore[attr-defined]
