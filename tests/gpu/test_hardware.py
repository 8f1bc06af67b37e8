"""Catalog constants, derived sizes and lookup errors."""

import pytest

from lanes.gpu.hardware import GB, HARDWARE, KIB, MODELS, Hardware, get_hardware, get_model
from lanes.gpu.transformer import Model


class TestHardware:
    def test_h100_sxm_datasheet(self):
        h = get_hardware("h100-sxm")
        assert h.hbm_bytes_per_s == 3.35e12
        assert h.bf16_flops_per_s == 989e12
        assert h.memory_bytes == 80 * GB

    def test_h200_datasheet(self):
        h = get_hardware("h200")
        assert h.hbm_bytes_per_s == 4.8e12
        assert h.memory_bytes == 141 * GB

    def test_a100_80gb_present(self):
        assert get_hardware("a100-80gb").memory_bytes == 80 * GB

    def test_half_mfu_is_the_cards_4945_tflops(self):
        assert get_hardware("h100-sxm").achieved_flops_per_s(0.5) == pytest.approx(494.5e12)

    @pytest.mark.parametrize("mfu", [0, -0.1, 1.5, float("nan")])
    def test_mfu_outside_unit_interval_is_rejected(self, mfu):
        with pytest.raises(ValueError, match=r"mfu must be a number in \(0, 1\]"):
            get_hardware("h100-sxm").achieved_flops_per_s(mfu)

    def test_unknown_name_lists_the_allowed_names(self):
        with pytest.raises(ValueError, match="hardware must be one of h100-sxm, h200, h200-measured, a100-80gb"):
            get_hardware("tpu")

    def test_every_entry_cites_a_source(self):
        assert all(h.source for h in HARDWARE.values())

    def test_nonpositive_bandwidth_is_rejected(self):
        with pytest.raises(ValueError, match="hbm_bytes_per_s"):
            Hardware("x", 0, 1e12, 1e9, "none")


class TestModel:
    def test_llama_8b_kv_is_128_kib_per_token(self):
        assert get_model("llama-3.1-8b").kv_bytes_per_token == 128 * KIB == 131_072

    def test_llama_70b_kv_is_320_kib_per_token(self):
        assert get_model("llama-3.3-70b").kv_bytes_per_token == 320 * KIB == 327_680

    def test_llama_8b_shape(self):
        m = get_model("llama-3.1-8b")
        assert (m.params, m.layers, m.d_model, m.kv_heads, m.head_dim) == (8.03e9, 32, 4096, 8, 128)

    def test_llama_70b_shape(self):
        m = get_model("llama-3.3-70b")
        assert (m.layers, m.d_model, m.kv_heads) == (80, 8192, 8)

    def test_llama_8b_weights_are_1606_gb(self):
        assert get_model("llama-3.1-8b").weight_bytes == pytest.approx(16.06 * GB)

    def test_attention_flops_per_pair_is_the_cards_524288(self):
        assert get_model("llama-3.1-8b").attention_flops_per_pair == 524_288

    def test_unknown_model_lists_the_allowed_names(self):
        with pytest.raises(ValueError, match=r"model must be one of llama-3.1-8b, llama-3.3-70b \(got 'gpt-5'\)"):
            get_model("gpt-5")

    def test_every_entry_cites_a_source(self):
        assert all(m.source for m in MODELS.values())

    def test_zero_layers_is_rejected(self):
        with pytest.raises(ValueError, match="layers must be an integer >= 1"):
            Model("x", 1e9, 0, 1024, 8, 128, 2, "none")
