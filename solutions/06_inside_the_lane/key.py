"""Answer key of set 06 (instructor only: never copied into exercises/)."""

import math
from functools import lru_cache

from grading.checks import all_of, one_of
from grading.judge import choice, close, equal
from lanes.lane.interactive import LanePolicy, LaneScenario, TenantLoad, simulate_lane
from lanes.lane.jobstore import daily_capacity_items_per_h, plan_overflow


def _one_tenant(v):
    start, end = v.surge_s
    tenant = TenantLoad("a", v.base_rate_per_s, surge_rate_per_s=v.surge_rate_per_s,
                        surge_start_s=start, surge_end_s=end)
    return LaneScenario(tenants=(tenant,), slots=v.slots, service_s=tuple(v.service_s),
                        deadline_s=v.deadline_s, seed=v.seed)


def _bound(v):
    """The queue bound q1 asks for; q3 and q4 build on it."""
    sc = _one_tenant(v)
    return int(sc.capacity_per_s * (sc.deadline_s - sc.service_s[1]))


@lru_cache(maxsize=None)
def _runs(v):
    sc = _one_tenant(v)
    bound = _bound(v)
    unbounded = simulate_lane(sc, LanePolicy())
    bounded = simulate_lane(sc, LanePolicy(max_queue=bound, drop_expired=True))
    start, end = v.surge_s
    two = sc.with_(tenants=(
        TenantLoad("steady", v.steady_rate_per_s),
        TenantLoad("flood", v.base_rate_per_s / 2, surge_rate_per_s=v.flood_rate_per_s,
                   surge_start_s=start, surge_end_s=end),
    ))
    shared = simulate_lane(two, LanePolicy(max_queue=bound, drop_expired=True))
    fair = simulate_lane(two, LanePolicy(max_queue=max(1, bound // 2), drop_expired=True, fair_share=True))
    return unbounded, bounded, shared, fair


def q1(a, v):
    sc = _one_tenant(v)
    exact = sc.capacity_per_s * (sc.deadline_s - sc.service_s[1])
    accepted = {math.floor(exact - 1e-9), math.floor(exact + 1e-9)}  # rounding at a whole number
    # one criterion: a small whole bound is shared by many variants, the capacity is not
    return all_of(one_of("q1_queue_bound", a["q1_queue_bound"], accepted,
                         message="q1_queue_bound does not match the value recomputed for your variant (queue "
                         "wait at the back of a full queue plus the longest service must fit in the deadline)"),
                  close("q1_capacity_per_s", a["q1_capacity_per_s"], sc.capacity_per_s, rel=1e-6,
                        hint="slots over the mean service time"))


def q2(a, v):
    unbounded = _runs(v)[0]
    return equal("q2_answered_late", a["q2_answered_late"], unbounded.count("late"),
                 hint="one unbounded FIFO run of your scenario, counting answers the client no longer waited for")


def q3(a, v):
    unbounded, bounded = _runs(v)[:2]
    expected = bounded.goodput_per_s() / unbounded.goodput_per_s()
    return close("q3_goodput_gain", a["q3_goodput_gain"], expected, rel=1e-4,
                 hint="a ratio of on-time answers per second: bounded with expired drops over unbounded")


def q4(a, v):
    shared, fair = _runs(v)[2:]
    expected = fair.count("served", "steady") - shared.count("served", "steady")
    return equal("q4_steady_saved", a["q4_steady_saved"], expected,
                 hint="on-time answers of the steady tenant, fair share minus one shared queue")


def q5(a, v):
    return choice("q5_choice", a["q5_choice"], "c",
                  hint="what changes for the users the lane does answer during a long surge?")


def q6(a, v):
    caps = daily_capacity_items_per_h(slots=v.pool_slots, headroom_slots=v.headroom_slots, item_s=v.item_s)
    hours = [caps[h % 24] * v.safety for h in range(v.job_deadline_h)]
    expected = plan_overflow(v.job_items, hours).overflow_items
    return close("q6_overflow_items", a["q6_overflow_items"], expected, abs_tol=1,
                 hint="the hours before the deadline, each at the planner's share of that hour's capacity")
