"""A variant that shows another case's image shows one of the same split (issue 48, with V12's rule made the rule).

V2 and V3 drew the other case from every split: a V2 training item (role ``augments``) could show a held-out image,
and a test item a training one. Every perturbation that reads other cases declares it (``related_cases``); the
only door to other cases is :meth:`medr2.perturb.context.PerturbContext.others_for`. The test enumerates the
registry's perturbations that declare other cases, builds a bench with them and checks every variant's other case.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from medr2 import Perturbation
from medr2.perturb.registry import load_perturbations


def _reading_other_cases() -> list[str]:
    reg = load_perturbations()
    return sorted(code for code in reg.names() if reg[code].related_cases is not Perturbation.related_cases)


def test_every_variant_showing_another_case_stays_in_its_split(build_sample: Callable[..., Path],
                                                              tmp_path: Path) -> None:
    from medr2.bench import load_bench

    codes = _reading_other_cases()
    assert {"V2", "V3", "V12"} <= set(codes)  # the ones known today; a new one is checked as it is registered
    bench = load_bench(build_sample(tmp_path / "bench", n_cases=24, variants=codes, workers=1))
    split_of = {c.case_id: c.split for c in bench.cases}
    checked = 0
    for it in bench.items:
        if it.variant == "clean":
            continue
        others = [v for v in it.perturbation.values() if isinstance(v, str) and v in split_of and v != it.case_id]
        for other in others:
            assert split_of[other] == it.split, (it.variant, it.item_id, other)
            checked += 1
    assert checked > 0
