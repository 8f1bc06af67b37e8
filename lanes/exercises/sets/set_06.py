"""Set 06: inside the lane (bounded queues, deadline drops, fair share, adaptive LIFO, overflow)."""

from lanes.exercises.forms import Choice, Float, Int
from lanes.exercises.spec import Question, SetSpec
from lanes.lane.jobstore import daily_capacity_items_per_h


def job_items(pool_slots, headroom_slots, item_s, deadline_h, factor):
    """A job of about ``factor`` times the items the lane can do by its deadline (hundreds)."""
    caps = daily_capacity_items_per_h(slots=pool_slots, headroom_slots=headroom_slots, item_s=item_s)
    return int(round(factor * sum(caps[h % 24] for h in range(deadline_h)), -2))


def draw(rng):
    slots = rng.randrange(6, 15)
    lo = rng.randrange(30, 71) / 100
    hi = round(lo + rng.randrange(70, 131) / 100, 2)
    capacity = slots / ((lo + hi) / 2)
    pool_slots = rng.randrange(48, 81, 4)
    headroom = rng.randrange(4, 13)
    item_s = float(rng.randrange(300, 601, 15))
    deadline_h = rng.randrange(26, 37)
    return {
        "slots": slots,
        "service_s": (lo, hi),
        "deadline_s": rng.randrange(35, 71) / 10,
        "base_rate_per_s": round(rng.uniform(0.6, 0.8) * capacity, 1),
        "surge_rate_per_s": round(rng.uniform(1.4, 1.9) * capacity, 1),
        "surge_s": (60.0, 60.0 + rng.randrange(90, 151, 5)),
        "steady_rate_per_s": round(rng.uniform(0.25, 0.35) * capacity, 1),
        "flood_rate_per_s": round(rng.uniform(3.0, 4.0) * capacity, 1),
        "seed": rng.randrange(1, 10**6),
        "pool_slots": pool_slots,
        "headroom_slots": headroom,
        "item_s": item_s,
        "job_deadline_h": deadline_h,
        "job_items": job_items(pool_slots, headroom, item_s, deadline_h, rng.uniform(1.3, 1.9)),
        "safety": rng.randrange(85, 96) / 100,
    }


SPEC = SetSpec(
    slug="06_inside_the_lane",
    questions=(
        Question("q1", 1, {"q1_queue_bound": Int(lo=0), "q1_capacity_per_s": Float(lo=0)}),
        Question("q2", 2, {"q2_answered_late": Int(lo=0)}),
        Question("q3", 2, {"q3_goodput_gain": Float(lo=0)}),
        Question("q4", 2, {"q4_steady_saved": Int()}),
        Question("q5", 1, {"q5_choice": Choice("abcd")}),
        Question("q6", 2, {"q6_overflow_items": Int(lo=0)}),
    ),
    default={
        "slots": 10, "service_s": (0.4, 1.4), "deadline_s": 6.0,
        "base_rate_per_s": 8.0, "surge_rate_per_s": 18.0, "surge_s": (60.0, 210.0),
        "steady_rate_per_s": 3.3, "flood_rate_per_s": 40.0, "seed": 6063,
        "pool_slots": 80, "headroom_slots": 12, "item_s": 450.0, "job_deadline_h": 28,
        "job_items": job_items(80, 12, 450.0, 28, 1.5), "safety": 0.9,
    },
    draw=draw,
    options={
        "q5_choice": (
            "It makes each slot finish its request sooner, so the lane's capacity rises in the surge.",
            "It turns arrivals away at the front once the queue is full, so the queue never grows long.",
            "It answers the newest requests while their users still wait and drops stale ones quickly.",
            "It lets every request meet its deadline, since the newest always start within the timeout.",
        ),
    },
)
