"""The runs table says what is real and what is synthetic per field; the leaderboard shows short, unique run
names (the full name and model spec stay in the runs table)."""

from __future__ import annotations

from pathlib import Path

from medr2 import Case
from medr2.bench import load_bench
from medr2.records import Finding
from medr2.reporting.write import SHORT_NAME, data_provenance, short_names
from tests.report_fixtures import build_bench


class _Bench:
    def __init__(self, cases: list[Case]) -> None:
        self.cases = cases


def _case(i: int, *, synthetic: list[str], background: str | None, lesion: bool) -> Case:
    return Case(case_id=f"c{i}", image=f"images/{i}.png", image_sha256="0" * 64, width=10, height=10,
                modality="X-ray", body_region="chest", patient_id=f"p{i // 2}", source="s", license="l",
                findings=[Finding(label="nodule", box=(1, 1, 3, 3), synthetic=lesion)],
                synthetic_fields=synthetic, background=background, split="test")


def test_provenance_per_field_real_images_with_synthetic_lesions() -> None:
    cases = [_case(0, synthetic=["diagnosis", "findings"], background="bg0.png", lesion=True),
             _case(1, synthetic=["findings"], background="bg1.png", lesion=True),
             _case(2, synthetic=["pixel_spacing_mm"], background=None, lesion=False),
             _case(3, synthetic=[], background=None, lesion=False)]
    text = data_provenance(_Bench(cases))
    assert text == ("4 cases (2 patients); image: real in 4 of 4 (2 with synthetic lesions drawn into a real image); "
                    "synthetic: findings 2, diagnosis 1, pixel_spacing_mm 1 of 4; every other field real")
    assert "0 real" not in text


def test_provenance_of_the_fixture_bench(tmp_path: Path) -> None:
    build_bench(tmp_path)
    text = data_provenance(load_bench(tmp_path, validate=False))
    assert text == "4 cases (4 patients); image: real in 4 of 4; synthetic: findings 4 of 4; every other field real"


def test_all_real_and_unknown() -> None:
    assert data_provenance(_Bench([_case(0, synthetic=[], background=None, lesion=False)])).endswith(
        "every field real")
    assert data_provenance(None) == "unknown"


def test_short_names_unique_and_short() -> None:
    long_a = "qwen2-vl-7b-instruct_independent_lora-epoch1_seed0"
    long_b = "qwen2-vl-7b-instruct_independent_lora-epoch2_seed0"
    same_1, same_2 = "a" * 11 + "middle-1" + "b" * 20, "a" * 11 + "middle-2" + "b" * 20
    names = short_names([long_a, long_b, "prior", same_1, same_2])
    assert names["prior"] == "prior"
    assert len(names[long_a]) == SHORT_NAME and names[long_a] != names[long_b]
    assert names[long_a].startswith("qwen2-vl-7b") and names[long_a].endswith("h1_seed0")
    # shortening would make these two equal: they keep their full names
    assert names[same_1] == same_1 and names[same_2] == same_2
    assert len(set(names.values())) == len(names)
