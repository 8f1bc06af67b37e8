"""Measured GPU steps: the loader, the calibrated step model, ``steptime`` and the measurement script."""

import json
import math
import statistics
from dataclasses import fields

import pytest

from lanes.engine import measured
from lanes.engine.calibration import H200_LLAMA_8B, StepModel
from lanes.engine.hardware import get_hardware, get_model

SHIPPED = measured.load_records()


def _raw_lines():
    return measured.DEFAULT_PATH.read_text().splitlines()


def _write(tmp_path, lines, name="steps.jsonl"):
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n")
    return p


def _replace_line(tmp_path, index, change):
    lines = _raw_lines()
    rec = json.loads(lines[index])
    change(rec)
    lines[index] = json.dumps(rec)
    return _write(tmp_path, lines)


def _first(kind):
    return next(i for i, line in enumerate(_raw_lines()) if json.loads(line)["kind"] == kind)


class TestLoader:
    def test_shipped_file_loads_every_line(self):
        assert len(SHIPPED) == len([line for line in _raw_lines() if line.strip()])
        kinds = {r["kind"] for r in SHIPPED}
        assert kinds == set(measured.KINDS)

    def test_dataframe_has_a_row_per_record_and_the_fields(self):
        df = measured.load()
        assert len(df) == len(SHIPPED)
        assert list(df["line"]) == list(range(1, len(SHIPPED) + 1))
        decode = df[df["kind"] == "decode"]
        assert decode["batch"].max() == 256
        assert (decode["median_s"] > 0).all()

    def test_model_shape_is_llama_8b(self):
        m = measured.model_from_records(SHIPPED)
        cat = get_model("llama-3.1-8b")
        assert (m.layers, m.d_model, m.kv_heads, m.head_dim) == (cat.layers, cat.d_model, cat.kv_heads, cat.head_dim)
        assert m.kv_bytes_per_token == 131072 == cat.kv_bytes_per_token

    def test_link_rates_and_ceilings(self):
        links = measured.link_rates(SHIPPED)
        assert round(links["pinned_out"] / 1e9) == 55
        assert round(links["pageable_out"] / 1e9, 1) == 13.6
        assert round(links["pageable_back"] / 1e9, 1) == 6.5
        c = measured.ceilings(SHIPPED)
        assert 3.7e12 < c["copy_bytes_per_s"] < 3.8e12
        assert 7.3e14 < c["matmul_flops_per_s"] < 7.4e14

    @pytest.mark.parametrize(
        "change, field",
        [
            (lambda r: r.pop("median_s"), "median_s"),
            (lambda r: r.update(median_s=-1), "median_s"),
            (lambda r: r.update(median_s="fast"), "median_s"),
            (lambda r: r.update(batch=0), "batch"),
            (lambda r: r.update(batch=2.5), "batch"),
            (lambda r: r.update(context=-5), "context"),
            (lambda r: r.update(kind="decoded"), "kind"),
            (lambda r: r.update(min_s=float("nan")), "min_s"),
        ],
    )
    def test_malformed_decode_line_names_line_and_field(self, tmp_path, change, field):
        i = _first("decode")
        p = _replace_line(tmp_path, i, change)
        with pytest.raises(ValueError, match=rf"steps\.jsonl line {i + 1}: field '{field}'"):
            measured.load_records(p)

    def test_malformed_prefill_and_env_lines(self, tmp_path):
        i = _first("prefill")
        p = _replace_line(tmp_path, i, lambda r: r.pop("chunk"))
        with pytest.raises(ValueError, match=rf"line {i + 1}: field 'chunk' is missing"):
            measured.load_records(p)
        j = _first("env")
        p = _replace_line(tmp_path, j, lambda r: r["shape"].update(kv_heads=0))
        with pytest.raises(ValueError, match=rf"line {j + 1}: field 'shape.kv_heads'"):
            measured.load_records(p)

    def test_invalid_json_names_the_line(self, tmp_path):
        lines = _raw_lines()
        lines[5] = lines[5][:-3]
        with pytest.raises(ValueError, match=r"line 6: not valid JSON"):
            measured.load_records(_write(tmp_path, lines))

    def test_file_without_env_or_steps_is_refused(self, tmp_path):
        lines = [line for line in _raw_lines() if json.loads(line)["kind"] != "env"]
        with pytest.raises(ValueError, match="field 'kind' has no 'env' line"):
            measured.load_records(_write(tmp_path, lines))
        lines = [line for line in _raw_lines() if json.loads(line)["kind"] != "prefill"]
        with pytest.raises(ValueError, match="needs both 'decode' and 'prefill'"):
            measured.load_records(_write(tmp_path, lines))

    def test_blank_lines_are_skipped_but_counted(self, tmp_path):
        lines = _raw_lines()
        i = _first("decode")
        rec = json.loads(lines[i])
        rec["median_s"] = 0
        lines[i] = json.dumps(rec)
        lines.insert(1, "")
        with pytest.raises(ValueError, match=rf"line {i + 2}: field 'median_s'"):
            measured.load_records(_write(tmp_path, lines))


class TestFit:
    def test_refit_reproduces_the_stored_coefficients(self):
        fit = measured.fit_step_model()
        for f in fields(StepModel):
            a, b = getattr(fit, f.name), getattr(H200_LLAMA_8B, f.name)
            if isinstance(b, float):
                assert a == pytest.approx(b, rel=1e-9), f.name
            else:
                assert a == b, f.name

    def test_parameters_are_physical(self):
        sm = H200_LLAMA_8B
        c = measured.ceilings(SHIPPED)
        # achieved rates lie below the measured ceilings and the H200 datasheet
        assert 0.5 * c["matmul_flops_per_s"] < sm.matmul_flops_per_s < c["matmul_flops_per_s"]
        assert sm.prior_attention_flops_per_s < sm.chunk_attention_flops_per_s < c["matmul_flops_per_s"]
        assert 3.5e12 < sm.kv_bytes_per_s < get_hardware("h200").hbm_bytes_per_s
        assert 0 < sm.fixed_s_per_layer < 1e-4
        # a prompt token's extra: K/V expanded to all query heads plus activations, a few us
        assert 1e-6 < sm.prefill_s_per_token < 2e-5
        # fitted on decode rows, the matmul rate lands close to the separately measured ceiling
        assert sm.matmul_flops_per_s > 0.9 * c["matmul_flops_per_s"]
        assert sm.eager_floor_s == pytest.approx(statistics.median(
            [r["eager_median_s"] for r in SHIPPED if "eager_median_s" in r]))

    def test_residuals_within_stated_bounds(self):
        res = [r for r in measured.residuals() if r.in_fit]
        assert len(res) == 36
        errs = [abs(r.error) for r in res]
        assert statistics.median(errs) < 0.025
        assert max(errs) < 0.05

    def test_leave_one_out_within_stated_bounds(self):
        loo = [r for r in measured.leave_one_out() if r.in_fit]
        errs = [abs(r.error) for r in loo]
        assert statistics.median(errs) < 0.03
        assert max(errs) < 0.06
        # leaving a row out can only make its own prediction worse or equal on average
        full = {(r.kind, r.batch, r.context, r.chunk, r.prior): abs(r.error) for r in measured.residuals()}
        assert statistics.mean(errs) >= statistics.mean(full[(r.kind, r.batch, r.context, r.chunk, r.prior)] for r in loo)

    def test_rows_out_of_the_fit_are_the_launch_bound_prefills(self):
        out = [r for r in measured.residuals() if not r.in_fit]
        assert {(r.chunk, r.prior) for r in out} == {(512, 0), (1024, 0), (512, 2048)}
        assert all(r.predicted_s >= H200_LLAMA_8B.eager_floor_s for r in out)

    def test_ablation_rows_agree_with_the_attention_term(self):
        # measured attention share of a decode step: with minus without attention
        m = get_model("llama-3.1-8b")
        abl = {(r["batch"], r["attention"]): r["median_s"] for r in SHIPPED
               if r["kind"] == "ablation" and "attention" in r and r["lm_head"]}
        for b in (1, 64):
            measured_attn = abl[(b, True)] - abl[(b, False)]
            model_attn = H200_LLAMA_8B.breakdown(m, decode=(b, 2048))["decode_attention_s"]
            assert model_attn == pytest.approx(measured_attn, rel=0.25), b


class TestSteptimeCli:
    def _json(self, capsys, argv):
        from lanes.cli import main

        assert main(["steptime", *argv, "--json"]) == 0
        return json.loads(capsys.readouterr().out)

    def test_decode_row_of_the_file_within_its_residual(self, capsys):
        row = next(r for r in SHIPPED if r["kind"] == "decode" and r["batch"] == 64 and r["context"] == 2048)
        out = self._json(capsys, ["--hardware", "h200-measured", "--model", "llama-3.1-8b",
                                  "--decode", "64", "2048"])
        assert out["step_s"] == pytest.approx(row["median_s"], rel=0.09)
        assert sum(out["breakdown"].values()) == pytest.approx(out["step_s"])

    def test_mixed_step_sums_the_parts_and_shares_one_weight_read(self, capsys):
        m = get_model("llama-3.1-8b")
        both = self._json(capsys, ["--decode", "64", "2048", "--prefill", "512", "0", "--prefill", "256", "1024"])
        dec = self._json(capsys, ["--decode", "64", "2048"])
        pre = self._json(capsys, ["--prefill", "512", "0", "--prefill", "256", "1024"])
        shared = both["breakdown"]["weights_s"] + both["breakdown"]["fixed_s"]
        assert both["step_s"] == pytest.approx(dec["step_s"] + pre["step_s"] - shared)
        assert both["tokens"] == 64 + 512 + 256
        assert both["step_s"] == pytest.approx(H200_LLAMA_8B.step_s(m, decode=(64, 2048),
                                                                    prefills=[(512, 0), (256, 1024)]))

    def test_eager_prefill_is_held_at_the_launch_floor(self, capsys):
        out = self._json(capsys, ["--prefill", "512", "2048", "--eager"])
        row = next(r for r in SHIPPED if r["kind"] == "prefill" and r["chunk"] == 512 and r["prior"] == 2048)
        assert out["step_s"] == pytest.approx(row["median_s"], rel=0.02)
        assert out["breakdown"]["launch_s"] > 0

    def test_datasheet_profile_uses_the_roofline(self, capsys):
        from lanes.engine.steps import step_cost

        out = self._json(capsys, ["--hardware", "h200", "--decode", "64", "2048"])
        cost = step_cost([(2048, 1)] * 64, model=get_model("llama-3.1-8b"), hardware=get_hardware("h200"))
        assert out["step_s"] == pytest.approx(cost.duration_s)
        assert out["step_s"] < measured.residuals()[0].measured_s * 2  # sanity: milliseconds

    def test_human_line(self, capsys):
        from lanes.cli import main

        assert main(["steptime", "--decode", "8", "512"]) == 0
        text = capsys.readouterr().out
        assert text.count("\n") == 1 and "step" in text and "ms" in text

    @pytest.mark.parametrize(
        "argv, word",
        [
            (["--hardware", "tpu", "--decode", "1", "1"], "hardware"),
            (["--model", "gpt", "--decode", "1", "1"], "model"),
            (["--decode", "-1", "512"], "--decode BATCH"),
            (["--decode", "8", "-512"], "--decode CONTEXT"),
            (["--prefill", "0", "0"], "--prefill TOKENS"),
            (["--prefill", "16", "-1"], "--prefill PRIOR"),
            ([], "--decode or --prefill"),
            (["--hardware", "h200", "--decode", "1", "1", "--eager"], "--eager"),
        ],
    )
    def test_bad_input_exits_2_with_one_line(self, capsys, argv, word):
        from lanes.cli import main

        assert main(["steptime", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and word in err

    def test_cli_path_imports_no_numpy_or_pandas(self):
        import subprocess
        import sys

        code = ("import sys; from lanes.cli import main; main(['steptime', '--decode', '64', '2048', "
                "'--prefill', '512', '0', '--json']); "
                "bad = [m for m in ('numpy', 'pandas', 'matplotlib') if m in sys.modules]; "
                "assert not bad, bad")
        done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        assert json.loads(done.stdout)["step_s"] > 0


class TestMeasurementScript:
    """The script's record builders, without torch: their lines are what the loader accepts."""

    @pytest.fixture(scope="class")
    def ms(self):
        import importlib.util
        from pathlib import Path

        path = Path(__file__).resolve().parents[1] / "scripts" / "measure_steps.py"
        spec = importlib.util.spec_from_file_location("measure_steps", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod

    def test_script_does_not_import_torch_at_module_level(self, ms):
        import sys

        assert "torch" not in sys.modules

    def test_shape_arithmetic_matches_the_shipped_env_line(self, ms):
        env = next(r for r in SHIPPED if r["kind"] == "env")
        assert ms.param_count(ms.LLAMA_8B) == env["params"]
        assert ms.kv_bytes_per_token(ms.LLAMA_8B) == env["kv_bytes_per_token"]
        shipped = [(r["batch"], r["context"]) for r in SHIPPED if r["kind"] == "decode"]
        assert ms.decode_grid(ms.LLAMA_8B, env["memory_bytes"]) == shipped

    def test_synthetic_file_round_trips_and_refits(self, ms, tmp_path):
        """Times made by the stored model, written by the builders, refit to the same parameters."""
        sm, m, shape = H200_LLAMA_8B, get_model("llama-3.1-8b"), ms.LLAMA_8B
        recs = [ms.env_record(shape, torch_version="test", gpu="Synthetic GPU", sms=132,
                              memory_bytes=150_000_000_000)]
        recs.append(ms.ceiling_record("device copy", [2**30 / 3.7e12] * 3, bytes=2**30))
        recs.append(ms.ceiling_record("bf16 matmul 8192^3", [2 * 8192**3 / 7.3e14] * 3, flops=2 * 8192**3))
        recs.append(ms.link_record("device to host", True, 2**30, [0.02, 0.019, 0.021]))
        recs.append(ms.link_record("host to device", False, 2**30, [0.16, 0.17, 0.15]))
        for b, c in ms.decode_grid(shape, 150e9):
            t = sm.step_s(m, decode=(b, c))
            eager = [sm.eager_floor_s] if (b, c) in ((1, 2048), (64, 2048)) else None
            recs.append(ms.decode_record(b, c, [t * 0.99, t, t * 1.01], shape, eager))
        for prior, chunk in [(0, 2048), (0, 4096), (0, 8192), (0, 32768), (8192, 4096), (24576, 8192)]:
            t = sm.step_s(m, prefills=[(chunk, prior)], eager=True)
            recs.append(ms.prefill_record(chunk, prior, [t] * 5))
        recs.append(ms.ablation_record(64, 2048, False, True, [0.0076] * 3))
        recs.append(ms.gemv_record(7516192768, [7516192768 / sm.weight_bytes_per_s] * 3, 32))
        path = tmp_path / "synthetic.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in recs))

        loaded = measured.load_records(path)
        assert len(loaded) == len(recs)
        assert measured.link_rates(loaded)["pageable_back"] == pytest.approx(2**30 / 0.16)
        fit = measured.fit_step_model(loaded)
        for name in ("fixed_s_per_layer", "matmul_flops_per_s", "kv_bytes_per_s", "prefill_s_per_token",
                     "chunk_attention_flops_per_s", "prior_attention_flops_per_s"):
            assert getattr(fit, name) == pytest.approx(getattr(sm, name), rel=0.02), name
        worst = max(abs(r.error) for r in measured.residuals(fit, loaded) if r.in_fit)
        assert worst < 0.01
        hw = measured.hardware_from_file(path, name="synthetic")
        assert hw.calibration == fit and hw.memory_bytes == 150_000_000_000

    def test_timing_refuses_empty_or_nonpositive_times(self, ms):
        with pytest.raises(ValueError, match="times_s"):
            ms.timing([])
        with pytest.raises(ValueError, match="times_s"):
            ms.timing([0.01, 0.0])


class TestProfileInTheEngine:
    """h200-measured is usable wherever h200 is: step_cost, the step simulator, the chains."""

    def test_step_cost_matches_the_calibration_for_a_mixed_step(self):
        from lanes.engine.steps import step_cost

        m, h = get_model("llama-3.1-8b"), get_hardware("h200-measured")
        seqs = [(2048, 1)] * 32 + [(1024, 1)] * 32 + [(0, 512), (4096, 256)]
        cost = step_cost(seqs, model=m, hardware=h)
        kv_tokens = 32 * 2048 + 32 * 1024
        expected = H200_LLAMA_8B.parts(m, batch=64, kv_tokens=kv_tokens, prefills=[(512, 0), (256, 4096)])
        assert cost.additive and cost.duration_s == pytest.approx(expected["step_s"])
        assert cost.duration_s == pytest.approx(
            H200_LLAMA_8B.step_s(m, decode=(64, 1536), prefills=[(512, 0), (256, 4096)]))
        # the datasheet profile still takes the roofline's max
        roof = step_cost(seqs, model=m, hardware=get_hardware("h200"))
        assert not roof.additive and roof.duration_s == max(roof.compute_s, roof.memory_s)

    def test_simulator_runs_on_the_measured_profile(self):
        from lanes.engine.steps import Request, simulate

        run = simulate([Request(3000, output_tokens=4)], budget_tokens=2048, hardware="h200-measured",
                       decoders=16, decoder_context_tokens=1024)
        m = get_model("llama-3.1-8b")
        first = run.steps[0]
        assert first.duration_s == pytest.approx(
            H200_LLAMA_8B.step_s(m, decode=(16, 1024), prefills=[(2048 - 16, 0)]))
        assert run.ttft_s[0] > 0 and len(run.steps) == 2 + 3

    def test_goodput_max_batch_is_the_last_batch_within_target(self):
        from lanes.engine import chains

        m = get_model("llama-3.1-8b")
        for target in (0.008, 0.010, 0.020):
            n = chains.goodput(hardware="h200-measured", tpot_target_s=target).max_batch_at_target
            assert H200_LLAMA_8B.step_s(m, decode=(n, 2048)) <= target < H200_LLAMA_8B.step_s(m, decode=(n + 1, 2048))

    def test_recompute_uses_the_whole_calibrated_prefill(self):
        from lanes.engine import chains

        m = get_model("llama-3.1-8b")
        r = chains.swap_vs_recompute(hardware="h200-measured", link_bytes_per_s=55e9)
        assert r.recompute_s_per_token == pytest.approx(H200_LLAMA_8B.step_s(m, prefills=[(4096, 0)]) / 4096)
        row = next(x for x in SHIPPED if x["kind"] == "prefill" and x["chunk"] == 4096 and x["prior"] == 0)
        assert r.recompute_s_per_token == pytest.approx(row["median_s"] / 4096, rel=0.03)
