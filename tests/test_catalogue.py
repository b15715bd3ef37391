"""The catalogue: sources beside every figure, look-ups, and calibration on disclosed runs."""

import math
import tomllib
from importlib import resources

import numpy as np
import pytest

from udfs import calibration, catalogue, engine
from udfs.catalogue import UnknownNameError


def _rows(kind, table):
    text = resources.files("udfs").joinpath("data", table).read_text(encoding="utf-8")
    return tomllib.loads(text)[kind]


@pytest.mark.parametrize(
    ("kind", "table"), [("run", "runs.toml"), ("accelerator", "accelerators.toml")]
)
def test_every_figure_has_a_source(kind, table):
    for row in _rows(kind, table):
        assert row.get("source", "").strip(), row["name"]
        for field, text in row.get("sources", {}).items():
            assert field in row, f"{row['name']}: source for absent field {field}"
            assert text.strip()
        for field, value in row.items():
            if isinstance(value, int | float):
                assert catalogue.source(kind, row["name"], field).strip()


def test_reference_runs_are_there_with_disclosed_figures():
    runs = catalogue.runs()
    llama = catalogue.run("llama-3.1-405b")
    assert llama["architecture"] == "dense"
    assert (llama["total_params"], llama["training_tokens"]) == (405e9, 15.6e12)
    assert (llama["accelerators"], llama["accelerator_hours"]) == (16384, 30.84e6)
    ds = catalogue.run("DeepSeek-V3")
    assert ds["architecture"] == "moe"
    assert (ds["total_params"], ds["active_params"], ds["accelerators"]) == (671e9, 37e9, 2048)
    assert ds["accelerator_hours"] == 2.788e6
    assert {
        "Llama 2 70B",
        "DeepSeek-V2",
        "GPT-3 175B",
        "PaLM 540B",
        "Chinchilla 70B",
        "Gopher 280B",
        "Mixtral 8x7B",
        "Nemotron-4 340B",
    } <= set(runs.index)


def test_unknown_figures_stay_blank():
    # Mixtral discloses neither tokens nor GPU-hours; H800 has no published TDP.
    mixtral = catalogue.run("mixtral")
    assert math.isnan(mixtral["training_tokens"]) and math.isnan(mixtral["accelerator_hours"])
    assert math.isnan(catalogue.accelerator("H800")["tdp_watts"])
    assert catalogue.accelerator_field("TPU v5p", "fp8_tflops") is None


@pytest.mark.parametrize(
    ("alias", "name"),
    [
        ("H100", "H100 SXM"),
        ("h100-80gb", "H100 SXM"),
        ("deepseek-v3", "DeepSeek-V3"),
        ("LLAMA-3.1-405B", "Llama 3.1 405B"),
        ("llama_3.1_405b", "Llama 3.1 405B"),
        ("mi300x", "MI300X"),
        ("gb200", "GB200 (per GPU)"),
    ],
)
def test_lookup_ignores_case_and_punctuation(alias, name):
    kind = "run" if "llama" in alias.lower() or "deepseek" in alias.lower() else "accelerator"
    found = catalogue.run(alias) if kind == "run" else catalogue.accelerator(alias)
    assert found["name"] == name


def test_unknown_name_lists_the_known_ones():
    with pytest.raises(UnknownNameError) as info:
        catalogue.accelerator("H1000")
    assert "H100 SXM" in str(info.value) and "MI300X" in str(info.value)
    with pytest.raises(UnknownNameError, match="bf16_tflops"):
        catalogue.accelerator_field("H100", "speed")


def test_an_unknown_run_suggests_the_three_closest_not_all_sixty():
    assert len(catalogue.runs()) > catalogue.MAX_NAMES_LISTED
    with pytest.raises(UnknownNameError) as info:
        catalogue.run("llama-3-405b")
    message = str(info.value)
    assert "did you mean Llama 3.1 405B, " in message
    assert message.count(", ") + message.count(" or ") <= 3  # not the whole catalogue
    assert f"({len(catalogue.runs())} runs in all: `compute-lab runs`" in message
    with pytest.raises(UnknownNameError) as info:  # nothing alike: no suggestion at all
        catalogue.run("zzzz")
    assert "did you mean" not in str(info.value) and "runs in all" in str(info.value)
    assert catalogue.closest_names("mixtral 8x22b", catalogue.runs()["name"]) == ["Mixtral 8x7B"]


def test_dataframes_have_units_columns():
    acc = catalogue.accelerators()
    assert list(acc.columns[:7]) == list(catalogue.ACCELERATOR_FIELDS)
    assert acc.loc["H100 SXM", "bf16_tflops"] == 989.4
    assert acc["bf16_tflops"].dtype == float


def test_implied_mfu_of_reference_runs():
    t = calibration.reference_table()
    # Derived calibration points in shared/reference-data.md.
    assert t.loc["Llama 3.1 405B", "implied_effective_tflops"] == pytest.approx(341, abs=0.5)
    assert t.loc["Llama 3.1 405B", "implied_mfu"] == pytest.approx(0.345, abs=0.001)
    assert t.loc["DeepSeek-V3", "implied_effective_tflops"] == pytest.approx(327, abs=0.5)
    assert t.loc["Llama 2 70B", "implied_effective_tflops"] == pytest.approx(136, abs=0.5)
    assert t.loc["Llama 2 70B", "implied_mfu"] == pytest.approx(0.435, abs=0.001)
    assert math.isnan(t.loc["Mixtral 8x7B", "implied_mfu"])
    # Using a run's own implied MFU gives back its disclosed hours.
    row = t.loc["DeepSeek-V3"]
    hours = engine.accelerator_hours(
        row["model_training_flops"], row["peak_tflops"] * row["implied_mfu"]
    )
    assert hours == pytest.approx(2.788e6)


def test_default_mfu_is_the_median_of_every_run_with_hours():
    t = calibration.reference_table()
    mfus = t["implied_mfu"].dropna()
    assert len(mfus) == 57
    assert calibration.default_mfu() == pytest.approx(np.median(mfus))
    # GPT-3's V100-hours: FLOPs / a throughput in a third party's paper (arXiv 2104.10350)
    assert t.loc["GPT-3 175B", "in_calibration"]
    assert catalogue.runs().loc["GPT-3 175B", "confidence"] == "low"
    assert t["in_calibration"].sum() == 57


def test_every_run_with_hours_says_who_trained_it_how_the_hours_are_known_and_how_sure():
    runs = catalogue.runs()
    with_hours = runs[runs["accelerator_hours"].notna()]
    assert with_hours["organisation"].notna().all() and with_hours["family"].notna().all()
    assert set(with_hours["hours_basis"]) <= {"stated", "count_x_wallclock", "derived"}
    assert set(with_hours["confidence"]) <= {"high", "medium", "low"}
    assert runs["organisation"].notna().all()
    # the breadth: many organisations, and several per accelerator family
    assert with_hours["organisation"].nunique() >= 15
    for family, names in {
        "A100": ("A100 SXM 80GB", "A100 SXM 40GB"),
        "H100": ("H100 SXM", "H800 SXM"),
        "TPU": ("TPU v3", "TPU v4"),
    }.items():
        on = with_hours[with_hours["accelerator"].isin(names)]
        assert len(on) >= 3 and on["organisation"].nunique() >= 2, family  # fmt: skip
    # V100 and AMD where the public record has them: two organisations each
    for names in (("V100 SXM2 32GB",), ("MI250", "MI250X", "MI300X", "MI325X")):
        on = with_hours[with_hours["accelerator"].isin(names)]
        assert on["organisation"].nunique() >= 2, names


def test_an_amd_module_is_one_accelerator_with_the_package_peak():
    # MI250/MI250X: two compute dies (GCDs) per module; runs count modules, so the peak is
    # the module's (AMD's launch table) and the implied MFU does not depend on the choice
    for name, peak in (("MI250X", 383.0), ("Instinct MI250", 362.1)):
        assert catalogue.accelerator(name)["bf16_tflops"] == peak
    poro = catalogue.run("Poro 34B")
    assert (poro["accelerator"], poro["accelerators"]) == ("MI250X", 512)  # 128 nodes x 4
    assert calibration.generation_of("MI250X") == "other"  # no calibrated AMD generation


def test_a100_40gb_is_its_own_accelerator_with_the_a100_peak():
    a40 = catalogue.accelerator("A100-40GB")
    assert a40["name"] == "A100 SXM 40GB"
    assert (a40["bf16_tflops"], a40["hbm_gb"]) == (312, 40)
    assert catalogue.accelerator("A100")["name"] == "A100 SXM 80GB"  # the bare alias unchanged


def test_a_typo_in_a_run_key_is_refused():
    rows = _rows("run", "runs.toml")
    allowed = set(catalogue.RUN_FIELDS) | {"aliases", "source", "sources", "calibration"}
    for row in rows:
        assert set(row) <= allowed, row["name"]
        assert isinstance(row.get("calibration", True), bool)
