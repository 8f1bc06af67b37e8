"""Request traces: the shipped hours, the loader, its copies, and replay through the models."""

from __future__ import annotations

import math

import gzip
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

import lanes
from lanes.cli import main
from lanes.gpu import replay as rp
from lanes.gpu.steps import simulate as simulate_steps
from lanes.pool import traces as tr

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def conv() -> tr.Trace:
    return tr.load_trace("conv")


@pytest.fixture(scope="module")
def code() -> tr.Trace:
    return tr.load_trace("code")


def _readme_rows() -> dict[str, list[str]]:
    """The figures the data's README states, by trace name (cells as written)."""
    rows = {}
    for line in (tr.DATA_DIR / "README.md").read_text(encoding="utf-8").splitlines():
        m = re.match(r"\| `(\w+)` \| `[^`]+`[^|]*\|(.*)\|$", line)
        if m:
            rows[m[1]] = [c.strip() for c in m[2].split("|")]
    return rows


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


class TestShipped:
    def test_both_names_load_with_the_readmes_figures(self):
        rows = _readme_rows()
        assert sorted(rows) == sorted(tr.SHIPPED)
        for name, cells in rows.items():
            s = tr.load_trace(name).summary()
            requests, span, rate, prompt, output = cells
            assert f"{s['requests']:,}" == requests
            assert f"{s['span_s']:,.0f} s" == span
            assert f"{s['rate_per_s']:.2f} /s" == rate
            assert " / ".join(f"{s[f'prompt_{q}']:,}" for q in ("p50", "p99", "max")) == prompt
            assert " / ".join(f"{s[f'output_{q}']:,}" for q in ("p50", "p99", "max")) == output

    def test_shipped_files_equal_the_published_csvs_where_those_are_at_hand(self):
        shared = ROOT.parent / "shared" / "traces"
        if not shared.is_dir():
            pytest.skip("the published CSVs are not beside this checkout")
        for name, file in tr.SHIPPED.items():
            original = (shared / file.removesuffix(".gz")).read_bytes()
            assert gzip.decompress((tr.DATA_DIR / file).read_bytes()) == original, name

    def test_the_licence_and_the_credit_ship_beside_the_data(self):
        files = {p.name for p in tr.DATA_DIR.iterdir()}
        assert {"LICENSE-CC-BY-4.0.txt", "README.md", *tr.SHIPPED.values()} <= files
        assert "Attribution 4.0 International" in (tr.DATA_DIR / "LICENSE-CC-BY-4.0.txt").read_text()
        readme = (tr.DATA_DIR / "README.md").read_text(encoding="utf-8")
        for needle in ("Splitwise", "ISCA 2024", "github.com/Azure/AzurePublicDataset", "CC BY 4.0"):
            assert needle in readme and needle in tr.ATTRIBUTION

    def test_arrivals_start_at_zero_and_never_go_back(self, conv, code):
        for t in (conv, code):
            assert t.arrival_s[0] == 0
            assert all(b >= a for a, b in zip(t.arrival_s, t.arrival_s[1:]))
            assert min(t.prompt_tokens) >= 1 and min(t.output_tokens) >= 1


class TestLayouts:
    def test_azure_and_rebased_layouts_give_the_same_trace(self, tmp_path):
        az = _write(tmp_path / "a.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                    "2023-11-16 23:59:59.5000000,10,3\n2023-11-17 00:00:01.2500000,20,4\n"
                    "2023-11-17 00:00:01.2500000,30,5\n")
        rb = _write(tmp_path / "b.csv", "arrival_s,prompt_tokens,output_tokens\n100.5,10,3\n102.25,20,4\n102.25,30,5\n")
        a, b = tr.load_trace(az), tr.load_trace(rb)
        assert a.arrival_s == b.arrival_s == (0.0, 1.75, 1.75)
        assert a.prompt_tokens == b.prompt_tokens == (10, 20, 30)
        assert a.output_tokens == b.output_tokens == (3, 4, 5)

    def test_columns_in_any_order_extra_columns_and_vidur_names(self, tmp_path):
        p = _write(tmp_path / "v.csv", "request_id,num_decode_tokens,arrived_at,num_prefill_tokens\n"
                   "0,7,0.0,100\n1,9,0.5,200\n")
        t = tr.load_trace(p)
        assert t.prompt_tokens == (100, 200) and t.output_tokens == (7, 9) and t.arrival_s == (0.0, 0.5)

    def test_unsorted_rows_are_sorted_ties_in_file_order(self, tmp_path):
        p = _write(tmp_path / "u.csv", "arrival_s,prompt_tokens,output_tokens\n5,1,1\n2,2,2\n5,3,3\n2,4,4\n")
        t = tr.load_trace(p)
        assert t.arrival_s == (0, 0, 3, 3) and t.prompt_tokens == (2, 4, 1, 3)

    def test_gzip_files_and_crlf_lines(self, tmp_path):
        p = tmp_path / "g.csv.gz"
        p.write_bytes(gzip.compress(b"arrival_s,prompt_tokens,output_tokens\r\n0,5,6\r\n1.5,7,8\r\n\r\n"))
        assert tr.load_trace(p).output_tokens == (6, 8)

    def test_a_shipped_trace_written_out_reloads_equal(self, conv, tmp_path):
        w = conv.window(0, 300)
        lines = ["arrival_s,prompt_tokens,output_tokens"]
        lines += [f"{t!r},{p},{o}" for t, p, o in zip(w.arrival_s, w.prompt_tokens, w.output_tokens)]
        back = tr.load_trace(_write(tmp_path / "w.csv", "\n".join(lines) + "\n"))
        assert (back.arrival_s, back.prompt_tokens, back.output_tokens) == (w.arrival_s, w.prompt_tokens, w.output_tokens)


GOOD = "arrival_s,prompt_tokens,output_tokens\n0,1,1\n"


class TestMalformed:
    @pytest.mark.parametrize(
        "body, line, field",
        [
            ("1.0,abc,3\n", 3, "prompt_tokens"),
            ("1.0,0,3\n", 3, "prompt_tokens"),
            ("1.0,5,-2\n", 3, "output_tokens"),
            ("1.0,5,2.5\n", 3, "output_tokens"),
            ("x,5,2\n", 3, "arrival_s"),
            ("nan,5,2\n", 3, "arrival_s"),
            ("-1,5,2\n", 3, "arrival_s"),
            ("1,5,2\n2,3\n", 4, "fields"),
            ("1,5,2\n\n2,3,4,5\n", 5, "fields"),
        ],
    )
    def test_one_error_names_the_line_and_the_field(self, tmp_path, body, line, field):
        p = _write(tmp_path / "bad.csv", GOOD + body)
        with pytest.raises(ValueError, match=rf"line {line}: .*{field}"):
            tr.load_trace(p)

    @pytest.mark.parametrize(
        "stamp, what",
        [("2023-11-16 18:15", "a time"), ("2023-02-30 00:00:00.1", "no such date"),
         ("2023-11-16 25:00:00.0", "no such time"), ("", "a time")],
    )
    def test_azure_timestamps_are_checked(self, tmp_path, stamp, what):
        p = _write(tmp_path / "bad.csv", f"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,1,1\n{stamp},2,2\n")
        with pytest.raises(ValueError, match=rf"line 3: field 'TIMESTAMP' .*{what}"):
            tr.load_trace(p)

    def test_an_unknown_header_names_line_one(self, tmp_path):
        with pytest.raises(ValueError, match=r"line 1: the header must name"):
            tr.load_trace(_write(tmp_path / "h.csv", "time,in,out\n0,1,1\n"))

    def test_no_rows_an_unknown_name_and_a_binary_file(self, tmp_path):
        with pytest.raises(ValueError, match="holds no request"):
            tr.load_trace(_write(tmp_path / "e.csv", "arrival_s,prompt_tokens,output_tokens\n"))
        with pytest.raises(ValueError, match=r"trace must be one of conv, code or a path"):
            tr.load_trace("conversation")
        (tmp_path / "b.csv.gz").write_bytes(b"\x00\x01not gzip")
        with pytest.raises(ValueError, match="cannot be read"):
            tr.load_trace(tmp_path / "b.csv.gz")

    def test_a_million_lines_stream_through_to_a_bad_last_line(self, tmp_path):
        p = tmp_path / "big.csv"
        with p.open("w") as f:
            f.write("arrival_s,prompt_tokens,output_tokens\n")
            f.write("0.25,100,20\n" * 999_999)
            f.write("0.5,100,twenty\n")
        with pytest.raises(ValueError, match=r"line 1000001: field 'output_tokens'"):
            tr.load_trace(p)


class TestCopies:
    def test_window_rebases_and_keeps_only_its_requests(self, conv):
        w = conv.window(600, 900)
        inside = [i for i, t in enumerate(conv.arrival_s) if 600 <= t < 900]
        assert w.n_requests == len(inside)
        assert w.arrival_s[0] == 0
        assert w.prompt_tokens == tuple(conv.prompt_tokens[i] for i in inside)
        assert w.arrival_s[-1] == pytest.approx(conv.arrival_s[inside[-1]] - conv.arrival_s[inside[0]])

    def test_window_errors(self, conv):
        with pytest.raises(ValueError, match="end_s must be"):
            conv.window(100, 50)
        with pytest.raises(ValueError, match="holds no request"):
            conv.window(10_000, 20_000)

    def test_scaling_multiplies_the_rate_and_keeps_the_tokens(self, conv):
        fast = conv.scaled(2)
        assert fast.rate_per_s == pytest.approx(2 * conv.rate_per_s)
        assert fast.span_s == pytest.approx(conv.span_s / 2)
        assert fast.output_tokens == conv.output_tokens
        with pytest.raises(ValueError, match="rate_factor must be"):
            conv.scaled(0)

    def test_resample_is_seeded_and_keeps_the_shape(self, conv):
        a, b, c = conv.resample(7), conv.resample(7), conv.resample(8)
        assert a == b and a != c
        assert a.span_s <= 60 * (int(conv.span_s // 60) + 1)
        assert set(a.output_tokens) <= set(conv.output_tokens)
        assert abs(a.rate_per_s / conv.rate_per_s - 1) < 0.1
        assert abs(a.summary()["output_p50"] / conv.summary()["output_p50"] - 1) < 0.1
        assert all(y >= x for x, y in zip(a.arrival_s, a.arrival_s[1:]))

    def test_a_poisson_copy_keeps_count_span_and_tokens(self, code):
        a, b = code.as_poisson(3), code.as_poisson(3)
        assert a == b and a != code.as_poisson(4)
        assert a.n_requests == code.n_requests and a.span_s == pytest.approx(code.span_s)
        assert a.prompt_tokens == code.prompt_tokens and a.output_tokens == code.output_tokens
        assert code.dispersion(1) > 5 and 0.85 < a.dispersion(1) < 1.15
        assert 0.7 < a.dispersion(60) < 1.4

    def test_to_frame_has_the_three_columns(self, code):
        df = code.window(0, 120).to_frame()
        assert list(df.columns) == ["arrival_s", "prompt_tokens", "output_tokens"]
        assert len(df) == code.window(0, 120).n_requests


class TestDispersion:
    def test_poisson_arrivals_give_about_one_and_even_spacing_about_zero(self):
        rng = random.Random(5)
        t, times = 0.0, []
        while t < 5000:
            times.append(t)
            t += rng.expovariate(4.0)
        poisson = tr.trace_from_requests(times, [1] * len(times), [1] * len(times))
        assert 0.85 < poisson.dispersion(1) < 1.15
        even = tr.trace_from_requests([i / 4 for i in range(20_000)], [1] * 20_000, [1] * 20_000)
        assert even.dispersion(1) < 0.05

    def test_counts_add_up(self, code):
        assert sum(code.counts(1)) == code.n_requests == sum(code.counts(60))

    def test_too_wide_bins_are_refused(self, code):
        with pytest.raises(ValueError, match="bin_s must leave at least two whole bins"):
            code.dispersion(3000)


class TestReplay:
    def test_holds_are_prefill_plus_outputs_times_the_decode_step(self, conv):
        w = conv.window(0, 60)
        prof = rp.hold_profile(w, batch=64)
        holds = rp.hold_times_s(w, batch=64)
        from lanes.gpu.hardware import get_hardware, get_model
        from lanes.gpu.steps import step_cost

        m, h = get_model("llama-3.1-8b"), get_hardware("h200-measured")
        for i in (0, 5, 17):
            prefill = step_cost([(0, w.prompt_tokens[i])], model=m, hardware=h).duration_s
            assert holds[i] == pytest.approx(prefill + w.output_tokens[i] * prof.decode_step_s)
        assert prof.decode_step_s > rp.hold_profile(w, batch=8).decode_step_s

    def test_the_stream_carries_the_trace(self, conv):
        w = conv.window(0, 600)
        sc, st = rp.replay_inputs(w)
        holds = rp.hold_times_s(w, batch=sc.slots)
        assert st.n_arrivals == w.n_requests
        assert st.arrival_tick == tuple(int(t) for t in w.arrival_s)
        assert st.inter_service_s == tuple(holds)  # event-driven: the priced holds, not rounded
        _, whole = rp.replay_inputs(w, lanes.anchor())  # the 1 s clock: whole seconds, rounded up
        assert whole.inter_service_s == tuple(max(1, math.ceil(h - 1e-9)) for h in holds)
        assert sc.ticks == int(w.arrival_s[-1]) + 1
        lo, hi = sc.inter_service_s
        assert hi - 1 < max(holds) <= hi  # the range describes the run: the holds are the stream's
        assert st.batch_service_s == lanes.draw_stream(sc).batch_service_s  # the course's backlog draw

    def test_table_reads_one_stream_for_every_policy(self, code):
        table = rp.trace_table(code.window(0, 900), policies=("priority", "reserve:8", "preempt"))
        sc, st = rp.replay_inputs(code.window(0, 900))
        assert [r.row() for r in table.results] == [lanes.simulate(sc, p, stream=st).row()
                                                     for p in ("priority", "reserve:8", "preempt")]

    def test_smallest_reserve_is_the_first_r_that_meets_the_target(self, conv):
        w = conv.window(0, 900)
        base = lanes.Scenario(slots=32)
        r = rp.smallest_reserve(w, 2, base)
        assert r is not None and r > 0
        assert rp.replay(w, f"reserve:{r}", base).p99_s <= 2 < rp.replay(w, f"reserve:{r - 1}", base).p99_s
        assert rp.smallest_reserve(w, 0, lanes.Scenario(slots=12)) is None

    def test_a_stream_for_another_scenario_is_refused(self, conv):
        w = conv.window(0, 300)
        holds = rp.hold_times_s(w)
        with pytest.raises(ValueError, match="scenario must cover the trace"):
            tr.trace_stream(w, holds, lanes.Scenario(hours=0.05))
        with pytest.raises(ValueError, match="hold_s must have one entry per request"):
            tr.trace_scenario(w, holds[:-1])
        with pytest.raises(ValueError, match="hold_s must hold numbers of seconds > 0"):
            tr.trace_scenario(w, [0.0] * w.n_requests)

    def test_zero_wait_load_sees_holds_of_a_fraction_of_a_second(self):
        # arrivals at 0.5 s (0.3 s), 0.7 s (1.0 s), and 1.7 s (0.2 s), the last taking the
        # slot the second frees at that instant
        st = lanes.ArrivalStream((), (0, 0, 1), (0.3, 1.0, 0.2), (0.5, 0.7, 0.7), 3)
        z = rp.zero_wait_load(st)
        assert z.mean == pytest.approx((0.6, 0.9, 0.0))
        assert z.most == (2, 1, 0)
        assert z.peak == 2 and z.mean_busy == pytest.approx(1.5 / 3)

    def test_zero_wait_load_is_the_slot_time_the_holds_fill(self, code):
        from lanes.pool import littles

        sc, st = rp.replay_inputs(code.window(0, 600))
        z = rp.zero_wait_load(st)
        at = [t + u for t, u in zip(st.arrival_tick, st.arrival_offset_s)]
        filled = sum(min(a + h, sc.ticks) - a for a, h in zip(at, st.inter_service_s))
        assert len(z.mean) == len(z.most) == sc.ticks
        assert sum(z.mean) == pytest.approx(filled, rel=1e-9)
        # the whole seconds only look at instants; the peak at one instant is at least theirs
        assert z.peak >= max(littles.zero_wait_busy(st)[: sc.ticks])
        assert all(m >= k for m, k in zip(z.most, littles.zero_wait_busy(st)))
        # on whole-second holds and arrivals the count changes only at whole seconds
        whole = lanes.draw_stream(lanes.anchor(hours=0.25))
        assert rp.zero_wait_load(whole).mean == tuple(littles.zero_wait_busy(whole)[: whole.seconds])

    def test_the_step_simulator_takes_a_trace(self, conv):
        w = conv.window(0, 20)
        result = simulate_steps(w, hardware="h200-measured")
        assert len(result.ttft_s) == w.n_requests
        assert result.arrival_s == w.arrival_s
        assert simulate_steps(rp.trace_requests(w), hardware="h200-measured") == result
        decoded = sum(s.decode_tokens for s in result.steps)
        assert decoded == sum(o - 1 for o in w.output_tokens)


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lanes", *args], capture_output=True, text=True, timeout=120)


class TestCli:
    def test_trace_text_for_a_shipped_trace_names_the_source(self, capsys):
        assert main(["trace", "conv"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0] == "trace conv: 19,366 requests over 3,502 s, mean rate 5.53 req/s"
        assert out[2].split() == ["prompt", "tokens", "1,020", "4,142", "14,050"]
        assert out[3].split() == ["output", "tokens", "129", "601", "1,000"]
        assert "Splitwise" in out[-1] and "CC BY 4.0" in out[-1]

    def test_trace_json_equals_the_summary(self, capsys, code):
        assert main(["trace", "code", "--json"]) == 0
        assert json.loads(capsys.readouterr().out) == code.summary()

    def test_trace_of_a_file_in_either_layout(self, tmp_path, capsys):
        p = _write(tmp_path / "r.csv", "arrival_s,prompt_tokens,output_tokens\n0,10,1\n2,30,3\n4,20,2\n")
        assert main(["trace", str(p), "--json"]) == 0
        s = json.loads(capsys.readouterr().out)
        assert (s["requests"], s["span_s"], s["rate_per_s"], s["prompt_p50"], s["output_max"]) == (3, 4.0, 0.75, 20, 3)

    def test_a_malformed_file_exits_2_with_one_line(self, tmp_path):
        p = _write(tmp_path / "m.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:00:00.0,5,x\n")
        out = run_cli("trace", str(p))
        assert out.returncode == 2 and out.stdout == ""
        assert len(out.stderr.splitlines()) == 1
        assert "line 2: field 'GeneratedTokens'" in out.stderr

    def test_table_trace_prints_the_replay(self, capsys, code):
        assert main(["table", "--trace", "code", "--policies", "priority,reserve:16"]) == 0
        out = capsys.readouterr().out.splitlines()
        assert out[0].startswith("trace code: 8,819 requests over 3,436 s (2.57 req/s)")
        table = rp.trace_table(code, policies=("priority", "reserve:16"))
        assert out[3:] == [r.line() for r in table.results]

    def test_table_trace_json_has_a_row_per_policy(self):
        out = run_cli("table", "--trace", "conv", "--json")
        assert out.returncode == 0, out.stderr
        assert [r["policy"] for r in json.loads(out.stdout)] == list(lanes.DEFAULT_POLICIES)

    def test_trace_imports_no_pandas(self):
        code = ("import sys; from lanes.cli import main; main(['trace', 'conv']); "
                "main(['table', '--trace', 'code', '--policies', 'priority']); "
                "print(sorted(m for m in ('pandas', 'numpy', 'matplotlib') if m in sys.modules))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, out.stderr
        assert out.stdout.splitlines()[-1] == "[]"
