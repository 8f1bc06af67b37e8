"""``python -m lanes chains`` and ``python -m lanes prefill``."""

import json
import subprocess
import sys

import pytest

from lanes.cli import main

CHAIN_KEYS = [
    "littles_law", "kv_in_flight", "goodput", "swap_vs_recompute",
    "hol_blocking", "p99_knee", "long_prompt", "tenant_cost",
]
CARD_PROMPTS = ["32768"] + ["500"] * 10


def run_json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


class TestChains:
    def test_json_has_the_eight_keys_of_numbers(self, capsys):
        out = run_json(capsys, ["chains", "--json"])
        assert list(out) == CHAIN_KEYS
        for name, values in out.items():
            assert values and all(isinstance(v, (int, float)) for v in values.values()), name

    def test_json_reproduces_the_card(self, capsys):
        out = run_json(capsys, ["chains", "--json"])
        assert out["littles_law"]["w_s"] == pytest.approx(7.975)
        assert out["littles_law"]["in_system"] == pytest.approx(79.75)
        assert round(out["kv_in_flight"]["kv_bytes"] / 1e9, 1) == 43.1
        assert round(out["kv_in_flight"]["ceiling_rps"]) == 37
        assert round(out["goodput"]["tpot_small_s"] * 1e3, 1) == 9.9
        assert round(out["goodput"]["tokens_per_s_large"]) == 8505
        assert round(out["swap_vs_recompute"]["break_even_bytes_per_s"] / 1e9, 1) == 7.6
        assert round(out["hol_blocking"]["short_ttft_fcfs_s"], 2) == 1.80
        assert round(out["hol_blocking"]["short_ttft_by_length_s"], 2) == 0.27
        assert round(out["p99_knee"]["rho_max"], 2) == 0.69
        assert round(out["long_prompt"]["chunk1_s"] * 1e3) == 301
        assert out["long_prompt"]["chunks"] == 13
        assert round(out["tenant_cost"]["round_robin_share_b"], 2) == 0.96

    def test_json_is_unrounded(self, capsys):
        out = run_json(capsys, ["chains", "--json"])
        assert out["hol_blocking"]["short_ttft_fcfs_s"] != round(out["hol_blocking"]["short_ttft_fcfs_s"], 3)

    def test_readable_output_names_every_chain(self, capsys):
        assert main(["chains"]) == 0
        text = capsys.readouterr().out
        for key in CHAIN_KEYS:
            assert f"[{key}]" in text
        assert "7.975 s" in text
        assert "301 ms" in text


class TestPrefill:
    def test_fcfs_card(self, capsys):
        out = run_json(capsys, ["prefill", "--budget", "8192", "--order", "fcfs", "--prompts", *CARD_PROMPTS, "--json"])
        assert len(out["ttft_s"]) == 11
        assert all(round(t, 2) == 1.80 for t in out["ttft_s"][1:])
        assert round(out["mean_ttft_s"], 2) == 1.78

    def test_by_length_card(self, capsys):
        out = run_json(capsys, ["prefill", "--budget", "8192", "--order", "by-length", "--prompts", *CARD_PROMPTS, "--json"])
        assert all(round(t, 2) == 0.27 for t in out["ttft_s"][1:])
        assert round(out["mean_ttft_s"], 2) == 0.41

    def test_ttft_in_the_order_given(self, capsys):
        out = run_json(capsys, ["prefill", "--order", "by-length", "--prompts", "500", "32768", "--json"])
        assert out["ttft_s"][0] < out["ttft_s"][1]

    def test_flags_change_the_answer(self, capsys):
        base = run_json(capsys, ["prefill", "--prompts", "4096", "--json"])["ttft_s"][0]
        slower = run_json(capsys, ["prefill", "--prompts", "4096", "--mfu", "0.25", "--json"])["ttft_s"][0]
        assert slower == pytest.approx(2 * base)  # compute-bound: half the MFU, twice the time

    def test_readable_table(self, capsys):
        assert main(["prefill", "--prompts", *CARD_PROMPTS]) == 0
        text = capsys.readouterr().out
        assert "1.797 s" in text and "mean TTFT 1.782 s" in text


class TestErrors:
    @pytest.mark.parametrize(
        "argv, message",
        [
            (["prefill", "--budget", "0", "--prompts", "500"], "budget_tokens must be an integer >= 1 (got 0)"),
            (["prefill", "--prompts", "-5"], "prompt_tokens must be an integer >= 1 (got -5)"),
            (["prefill", "--mfu", "1.5", "--prompts", "500"], "mfu must be a number in (0, 1] (got 1.5)"),
            (["prefill", "--model", "gpt", "--prompts", "500"], "model must be one of llama-3.1-8b, llama-3.3-70b"),
            (["prefill", "--hardware", "tpu", "--prompts", "500"], "hardware must be one of"),
            (["prefill", "--order", "sjf", "--prompts", "500"], "order must be one of fcfs, by-length"),
        ],
    )
    def test_bad_value_is_one_line_and_exit_2(self, capsys, argv, message):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert message in err
        assert err.count("\n") == 1


class TestSubprocess:
    def test_module_entry_point_prints_json(self):
        proc = subprocess.run(
            [sys.executable, "-m", "lanes", "chains", "--json"], capture_output=True, text=True, check=True
        )
        assert list(json.loads(proc.stdout)) == CHAIN_KEYS

    def test_no_heavy_imports_on_the_engine_path(self):
        code = (
            "import sys; from lanes.cli import main; "
            "main(['prefill', '--prompts', '500', '--json']); main(['chains', '--json']); "
            "import lanes.gpu.batcher, lanes.gpu.fairness; "
            "print(sorted(m for m in ('numpy', 'pandas', 'matplotlib', 'ipywidgets') if m in sys.modules))"
        )
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        assert proc.stdout.strip().splitlines()[-1] == "[]"
