"""Answer key of the capstone, set 12 (instructor only: never copied into exercises/).

q5 is scored on seeds that appear nowhere a student can read: they come from the course
secret (``python scripts/grade.py init`` makes it; the grader hands it to the judge) and the
student's token. A new secret for a new cohort changes them (regenerate nothing else).
"""

import hashlib
from functools import lru_cache

import lanes
from grading.checks import all_of
from grading.judge import Check, choice, equal

#: Unseen seeds per student, and how many of them a criterion must hold on.
HIDDEN_SEEDS = 7
MAJORITY = 4
#: q2 looks at the public seeds after the student's own.
NEXT_SEEDS = 5


def hidden_seeds(student: str, public_seed: int, secret: str | None = None) -> tuple:
    """The seeds q5 is judged on: from the course secret and the identifier, never the public seed."""
    from lanes.exercises.variants import course_secret

    secret = course_secret() if secret is None else secret
    out = []
    k = 0
    while len(out) < HIDDEN_SEEDS:
        digest = hashlib.sha256(f"lanes-capstone/{secret}/{student}/{k}".encode()).digest()
        seed = 1_000_000 + int.from_bytes(digest[:4], "big") % 9_000_000
        if seed != public_seed and seed not in out:
            out.append(seed)
        k += 1
    return tuple(out)


def scenario(v, seed):
    return lanes.anchor(slots=v.slots, hours=v.hours, backlog=v.backlog, inter_service_s=tuple(v.inter_service_s),
                        batch_service_s=tuple(v.batch_service_s), trough_rate=v.trough_rate,
                        peak_rate=v.peak_rate, preempt_cost_s=v.preempt_cost_s, seed=seed)


@lru_cache(maxsize=4)
def _trace(name):
    from lanes.pool import traces

    return traces.load_trace(name)


@lru_cache(maxsize=64)
def _replay_inputs(v, seed):
    """A trace day's (scenario, stream) on ``seed``: the seed picks the resample of the real hour."""
    from lanes.gpu import replay

    return replay.replay_inputs(_trace(v.trace).resample(seed), scenario(v, seed))


def simulate(v, seed, spec, **ext):
    """One run of the student's member on ``seed``: a simulated day, or a trace day's replay."""
    if v.trace:
        sc, stream = _replay_inputs(v, seed)
        return lanes.simulate(sc, spec, stream=stream, **ext)
    return lanes.simulate(scenario(v, seed), spec, **ext)


@lru_cache(maxsize=None)
def _run(v, seed, spec):
    """(p99 wait, batch jobs done) of one run."""
    r = simulate(v, seed, spec)
    return r.p99_s, r.batch_done


def _p99(v, seed, spec):
    return _run(v, seed, spec)[0]


@lru_cache(maxsize=None)
def min_reserve(v):
    """Smallest R for which reserve:R meets the p99 target on the public seed."""
    return next(r for r in range(v.slots + 1) if _p99(v, v.seed, f"reserve:{r}") <= v.p99_target_s)


# Each question is one criterion: a small whole number (R, or seeds met out of five) is shared by
# many variants, the batch jobs done beside it are not.
def q1(a, v):
    r = min_reserve(v)
    return all_of(equal("q1_min_reserve", a["q1_min_reserve"], r,
                        hint="plain reserve:R policies on your own seed, R = 0, 1, 2, ..."),
                  equal("q1_batch_done", a["q1_batch_done"], _run(v, v.seed, f"reserve:{r}")[1],
                        hint="batch jobs done by the run at that R"))


def q2(a, v):
    spec = f"reserve:{min_reserve(v)}"
    runs = [_run(v, v.seed + k, spec) for k in range(1, NEXT_SEEDS + 1)]
    return all_of(equal("q2_seeds_met", a["q2_seeds_met"], sum(p99 <= v.p99_target_s for p99, _ in runs),
                        hint="your q1 policy on the five seeds that follow yours, against the p99 target"),
                  equal("q2_batch_done_total", a["q2_batch_done_total"], sum(done for _, done in runs),
                        hint="batch jobs done by those five runs together"))


def q3(a, v):
    return choice("q3_choice", a["q3_choice"], "b", hint="how long has each batch job waited when it starts here?")


def q4(a, v):
    return choice("q4_choice", a["q4_choice"], "a", hint="which jobs can no longer be evicted, and who waits then?")


def policy_from(a, slots):
    """The student's configuration as a Policy; ValueError if the pool would refuse it."""
    aging = a["q5_aging_s"]
    pol = lanes.parse_policy(a["q5_policy"], floor=a["q5_floor"], aging_s=None if aging == -1 else aging,
                             victim=a["q5_victim"], min_run_s=a["q5_min_run_s"])
    pol.check_fits(slots)
    return pol


#: Interactive requests a run may leave unadmitted at its end (a fraction of arrivals).
UNADMITTED_SHARE = 0.005


def latency_met(result, target_s):
    """The p99 wait of admitted requests within ``target_s``, and (nearly) every arrival admitted.

    A policy that never admits an interactive request (fifo behind a backlog, a floor of
    every slot) reports a p99 of -1 s over no requests; it does not meet the target.
    """
    left = result.n_arrivals - result.n_interactive
    return 0 <= result.p99_s <= target_s and left <= UNADMITTED_SHARE * result.n_arrivals


def evaluate(v, pol, seeds):
    """(p99 met, both targets met) per seed."""
    out = []
    for seed in seeds:
        r = simulate(v, seed, pol)
        latency = latency_met(r, v.p99_target_s)
        out.append((latency, latency and r.batch_done >= v.batch_target))
    return out


@lru_cache(maxsize=None)
def _references() -> tuple:
    import json
    import pathlib

    data = json.loads((pathlib.Path(__file__).with_name("reference.json")).read_text())
    return tuple((r["reference"]["spec"], tuple(sorted(r["reference"]["ext"].items()))) for r in data)


def reference_answers(member: int) -> dict:
    """The q5 answers of the calibrated reference configuration of ``member`` (reference.json)."""
    spec, ext = _references()[member]
    ext = dict(ext)
    return {"q5_policy": spec, "q5_floor": ext.get("floor", 0), "q5_aging_s": ext.get("aging_s", -1),
            "q5_victim": ext.get("victim", "youngest"), "q5_min_run_s": ext.get("min_run_s", 0)}


def q5(a, v):
    """Met on a majority of the hidden seeds, or on as many of them as the calibrated reference.

    The reference meets the p99 target on 11 or more of its 12 validation seeds, but some
    members sit at the target (a p99 of 5 s against 5 s), and on a student's seven hidden
    seeds it can miss the majority (member 9's reserve:8 met it on 2 of 7 for one student of
    a class of 100). So the bar is never above what the reference reaches on the same seeds
    (seeds on which even the reference misses a target count against nobody); the reference
    is simulated only when a configuration falls short of the majority.
    """
    try:
        pol = policy_from(a, v.slots)
    except ValueError as e:
        msg = f"q5_policy with these settings is not a configuration the pool accepts ({str(e)[:120]})"
        return [Check(False, msg, 2), Check(False, "", 3)]
    seeds = hidden_seeds(v.student, v.seed)
    runs = evaluate(v, pol, seeds)
    latency, both = sum(x for x, _ in runs), sum(y for _, y in runs)
    need_latency = need_both = MAJORITY
    if latency < MAJORITY or both < MAJORITY:
        ref_pol = policy_from(reference_answers(v.scenario_id), v.slots)
        ref = runs if ref_pol == pol else evaluate(v, ref_pol, seeds)
        need_latency = min(MAJORITY, sum(x for x, _ in ref))
        need_both = min(MAJORITY, sum(y for _, y in ref))
    ok_latency, ok_both = latency >= need_latency, both >= need_both
    return [
        Check(ok_latency, "" if ok_latency else "on most unseen seeds the interactive p99 wait missed its target", 2),
        Check(ok_both, "" if ok_both else "on most unseen seeds the run did not meet the p99 target and the batch "
              "target together", 3),
    ]
