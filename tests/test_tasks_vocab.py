"""Options and the clinical vocabulary (issue 39): no wrong option is true of the case, no two options mean the
same; over generated label tables with look-alike spellings, and over a multi-source chest X-ray bench whose
three datasets name one lung opacity three ways."""

from __future__ import annotations

import csv
import re
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import medr2.vocab as V
from medr2 import Case, Item
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.images import ImageStore
from medr2.records import Finding, letter_index
from medr2.sources.multi import MultiSource, parse_quotas
from medr2.tasks import LabelPools, draft_case, vocab
from medr2.tasks.assemble import Assembler
from medr2.tasks.pools import case_positives
from tests import dataset_fixtures as F
from tests.build_fixtures import Spec, make_case
from tests.test_vocab import look_alike

CHEST = ["Lung Opacity", "pneumonia", "Infiltration", "consolidation", "Effusion", "pleural effusion",
         "Atelectasis", "Nodule", "Mass", "Nodule/Mass", "Cardiomegaly", "enlarged cardiomediastinum",
         "Pneumothorax", "COVID-19", "viral pneumonia", "bacterial pneumonia", "Emphysema", "COPD", "Edema",
         "Fibrosis", "Hernia", "tuberculosis"]


def wrong_options(it: Item) -> list[str]:
    right = {letter_index(x) for x in it.answer.split(",")} if it.answer else set()
    return [o for i, o in enumerate(it.options) if i not in right]


def assert_options_fair(it: Item, case: Case) -> None:
    keys = [vocab.norm(o) for o in it.options]
    assert len(set(keys)) == len(keys), ("two options mean the same", it.task, it.options)
    true = case_positives(case) + [it.options[letter_index(x)] for x in it.answer.split(",") if x]
    for o in wrong_options(it):
        hit = [t for t in true if V.conflicts(o, t)]
        assert not hit, (it.task, it.options, it.answer, o, hit)


_STORE = ImageStore(Path(tempfile.mkdtemp(prefix="medr2-vocab-")) / "images")


@st.composite
def label_tables(draw: st.DrawFn) -> list[Case]:
    """Chest X-ray cases whose finding and diagnosis labels come from one table in which some labels are
    look-alike spellings of others (trailing space, zero-width, full-width, soft hyphen, case, underscores)."""
    base = draw(st.lists(st.sampled_from(CHEST), min_size=4, max_size=10, unique=True))
    table = base + [look_alike(draw, x) for x in draw(st.lists(st.sampled_from(base), max_size=6))]
    cases = []
    for i in range(draw(st.integers(3, 7))):
        case = make_case(Spec(f"c{i}", 3 * i + 2), _STORE)  # an X-ray chest case of the build fixture
        labels = draw(st.lists(st.sampled_from(table), min_size=1, max_size=3))
        findings = [Finding(label=lab, box=f.box, attributes=f.attributes)
                    for lab, f in zip(labels, case.findings * 3, strict=False)]
        cases.append(case.model_copy(update={
            "findings": findings, "diagnosis": draw(st.sampled_from(table)),
            "mimics": draw(st.lists(st.sampled_from(table), max_size=3))}))
    return cases


@given(label_tables(), st.integers(0, 2**16))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
def test_built_items_never_offer_a_true_or_repeated_option(cases: list[Case], seed: int) -> None:
    pools = LabelPools.from_cases(cases)
    assembler = Assembler(seed)
    n = 0
    for case in cases:
        drafts = draft_case(case, pools, seed, "test", _STORE)
        for it in assembler.assemble(case, drafts, "test"):
            if it.options:
                assert_options_fair(it, case)
                n += 1
    assert n  # something was offered


# --------------------------------------------------------------------------- three datasets, one finding
def _rewrite_csv(path: Path, edit: dict[str, dict[str, str]], key: str, extra: list[dict[str, str]] = ()) -> None:
    rows = list(csv.DictReader(path.open()))
    fields = list(rows[0])
    for r in rows:
        r.update(edit.get(r[key], {}))
    with path.open("w", newline="") as fh:
        w = csv.DictWriter(fh, fields)
        w.writeheader()
        w.writerows([*rows, *extra])


@pytest.fixture(scope="module")
def cxr_bench(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """NIH calls it 'Infiltration' / 'Consolidation', RSNA 'Lung Opacity' (diagnosis pneumonia), VinDr-CXR
    'Lung Opacity' and 'Consolidation' with the global label 'Pneumonia'."""
    root = tmp_path_factory.mktemp("cxr")
    F.make_nih(root / "nih")
    _rewrite_csv(root / "nih" / "Data_Entry_2017.csv", {"00000004_000.png": {"Finding Labels": "Consolidation"},
                                                         "00000006_000.png": {"Finding Labels": "Pneumonia"}},
                 "Image Index")
    F.make_rsna(root / "rsna")
    F.make_vindr(root / "vindr")
    ann = root / "vindr" / "annotations" / "annotations_train.csv"
    box = {"x_min": "30", "y_min": "30", "x_max": "50", "y_max": "50"}
    _rewrite_csv(ann, {}, "image_id", [{"image_id": "e5f6", "rad_id": r, "class_name": c, **box}
                                       for r in ("R8", "R9") for c in ("Lung Opacity", "Consolidation")])
    labels = root / "vindr" / "annotations" / "image_labels_train.csv"
    _rewrite_csv(labels, {}, "image_id")
    rows = list(csv.DictReader(labels.open()))
    for r in rows:
        if r["image_id"] == "e5f6":
            r["Pneumonia"] = "1"
    with labels.open("w", newline="") as fh:
        w = csv.DictWriter(fh, list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    out = root / "bench"
    specs = [f"nih-cxr14:{root / 'nih'}", f"rsna-pneumonia:{root / 'rsna'}", f"vindr-cxr:{root / 'vindr'}"]
    build_bench(MultiSource(specs, parse_quotas([])), out, seed=5, workers=1)
    return out


def test_multi_source_chest_bench_offers_no_true_finding_as_a_wrong_option(cxr_bench: Path) -> None:
    b = load_bench(cxr_bench)
    positives = {c.case_id: case_positives(c) for c in b.cases}
    names = {V.normalise(p) for ps in positives.values() for p in ps}
    assert {"lung opacity", "pneumonia", "infiltration", "consolidation"} <= names  # the one finding, three ways
    assert len({c.source for c in b.cases}) == 3
    checked = 0
    for it in b.items:
        case = b.case(it.case_id)
        if it.options:
            assert_options_fair(it, case)
            checked += 1
        if it.task == "s3.absent_finding" and it.answer == "no" and positives[it.case_id]:
            # the absent twin asks about a label that is certainly absent: nothing related to what the case has
            q = V.normalise(it.question)
            for c in V.vocabulary():
                if any(V.conflicts(c.label, p) for p in positives[it.case_id]):
                    for t in c.terms:
                        assert not re.search(rf"(?<!\w){re.escape(V.normalise(t))}(?!\w)", q), (it.question, t)
            checked += 1
    assert checked > 20
