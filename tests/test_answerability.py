"""Answerability (issue 40): every task's contract (``TaskSpec.requires``, ``medr2.tasks.contract``) is checked
once per case, and the built benches of every source hold it as a property of their items: no item asserts
absence, normality, a count or "the lesion" on a case whose source does not declare those labels complete, and
no orientation item is asked of an image without a lateralising cue. Also: no bench file carries an absolute
path (the machine that built it)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from medr2 import Bench, Case, Item, vocab as clinical
from medr2.bench import load_bench
from medr2.builder.pipeline import build_bench
from medr2.images import ImageStore
from medr2.records import letter_index
from medr2.tasks import TASKS, LabelPools, draft_case, vocab
from medr2.tasks.common import COUNT_LABELS
from medr2.tasks.contract import REQUIREMENTS, contract_text, labels_complete, states_absent, unmet
from tests import dataset_fixtures as F
from tests.build_fixtures import Spec, make_case

FLAGS = ("findings_complete", "structures_complete", "one_lesion", "instances_complete", "lateralising",
         "severity_graded", "malignancy_discriminable", "discriminable")

# the public-dataset readers, each built from its fixture in the released layout
READERS: dict[str, tuple[Callable[[Path], object], str]] = {
    "nih-cxr14": (F.make_nih, "nih"), "rsna-pneumonia": (F.make_rsna, "rsna"), "vindr-cxr": (F.make_vindr, "vindr"),
    "msd": (F.make_msd_brain, "msd"), "brats": (F.make_brats, "brats"), "isic": (F.make_isic, "isic"),
    "kvasir-seg": (F.make_kvasir, "kvasir"), "cbis-ddsm": (F.make_cbis, "cbis"), "iu-xray": (F.make_iu, "iu"),
    # readers whose label maps name structures (raw label names and abbreviations: PZ/TZ, Anterior/Posterior)
    "msd-prostate": (F.make_msd_prostate, "prostate"), "msd-hippocampus": (F.make_msd_hippocampus, "hippocampus"),
}


def reader_of(name: str) -> str:
    """The reader a fixture of :data:`READERS` is built with (``msd-prostate``: ``msd``)."""
    return name.split("-")[0] if name.startswith("msd-") else name


def _reader_bench(tmp: Path, reader: str) -> Path:
    make, folder = READERS[reader]
    make(tmp / folder)
    out = tmp / "bench"
    build_bench(f"{reader_of(reader)}:{tmp / folder}", out, seed=0, workers=1)
    return out


@pytest.fixture(scope="module", params=["sample", "buildtest", *READERS])
def built(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          build_sample: Callable[..., Path]) -> Path:
    tmp = tmp_path_factory.mktemp(request.param.replace("-", "_"))
    if request.param == "sample":
        return build_sample(tmp / "bench", n_cases=40, workers=1)
    if request.param == "buildtest":
        build_bench("buildtest", tmp / "bench", seed=3, n_cases=30, workers=1)
        return tmp / "bench"
    return _reader_bench(tmp, request.param)


# --------------------------------------------------------------------------- what an item asserts, read from it

def _bench_labels(bench: Bench) -> tuple[set[str], set[str]]:
    findings = {vocab.norm(f.label) for c in bench.cases for f in c.findings}
    structures = {vocab.norm(s.name) for c in bench.cases for s in c.structures}
    return findings, structures


def _mentions(text: str, labels: set[str]) -> bool:
    t = f" {vocab.norm(text)} "
    return any(len(lab) > 2 and re.search(rf"\b{re.escape(lab)}\b", t) for lab in labels)


def claims(it: Item, case: Case, findings: set[str], structures: set[str]) -> set[str]:
    """What the item's key asserts that only complete labels (or a lateralising cue) can back, read from the
    item's text and answer, not from its task id: a count; a finding or structure named and keyed absent; finding
    labels offered as wrong options (each keyed absent); a normal image; "the lesion"; a mirrored/standard image."""
    out: set[str] = set()
    q = it.question.lower()
    if it.form == "mcq" and it.options and it.options == [o for o in COUNT_LABELS if o in it.options] \
            and ("how many" in q or "count" in q or "number" in q):
        out.add("structures" if it.stage == 2 else "findings")
    if it.form == "yesno":
        named = None if "diagnosis" in q else _named_finding(it.question, case, findings)  # a finding, not a dx
        if "mirrored" in q or "standard orientation" in q:
            out.add("lateralising")
        elif it.answer == "no" and named and not _mentions(it.question, structures):
            out.add(f"absent:{named}")  # a finding keyed absent: the truth must state it (states_absent)
        elif it.answer == "no" and (" visible" in q or "see the" in q or "include the" in q):
            out.add("structures")
        if named and "free of any" in q and it.answer == "yes":
            out.add(f"absent:{named}")
        normal_claim = bool(re.search(r"\bnormal\b", q)) or ("free of any" in q and not named)
        abnormal_claim = bool(re.search(r"\babnormal\b", q)) and not normal_claim
        if (normal_claim and it.answer == "yes") or (abnormal_claim and it.answer == "no"):
            out.add("findings")  # the image keyed normal
    if it.form in ("mcq", "multi") and it.options:
        right = {it.options[letter_index(x)] for x in it.answer.split(",")} if it.answer else set()
        wrong = [o for o in it.options if o not in right]
        if "marked" not in q and "outlined" not in q:  # finding labels keyed absent ("which finding is present")
            out.update(f"absent:{o}" for o in wrong if vocab.norm(o) in findings)
        if any(vocab.is_normal(str(a)) for a in right):
            out.add("findings")  # "no abnormality" keyed
        if "the lesion" in q and ("benign" in q or "malignant" in q):
            out.add("one_lesion")
    return out


def _named_finding(question: str, case: Case, findings: set[str]) -> str | None:
    """The finding label a yes/no question names (a finding label of the bench or one the case states absent; the
    longest written in it), or None."""
    low = question.lower()
    labels = {m.group(1) if (m := re.fullmatch(r"<[^:>]+:(.+)>", k)) else k for k in findings} | set(case.absent)
    hits = [lab for lab in labels if len(lab) > 2 and re.search(rf"\b{re.escape(lab.lower())}\b", low)]
    return max(hits, key=len) if hits else None


def _backed(claim: str, case: Case) -> bool:
    if claim.startswith("absent:"):  # a finding keyed absent: stated absent by the case's truth
        return states_absent(case, claim.split(":", 1)[1])
    if claim == "lateralising":
        return case.meta.get("lateralising") is True
    if claim == "one_lesion":
        return case.meta.get("one_lesion") is True or labels_complete(case, "findings")
    return labels_complete(case, claim)


def test_no_item_asserts_what_its_source_does_not_know(built: Path) -> None:
    bench = load_bench(built)
    findings, structures = _bench_labels(bench)
    for it in bench.items:
        if it.variant != "clean":
            continue
        case = bench.case(it.case_id)
        for claim in claims(it, case, findings, structures):
            assert _backed(claim, case), (built, it.task, it.question, it.options, it.answer, claim, case.meta)


def test_every_item_meets_its_task_contract(built: Path) -> None:
    """The contract as the builder applied it, checked again on the bench as written (cases read back)."""
    bench = load_bench(built)
    for it in bench.items:
        if it.variant == "clean" and it.task in TASKS:
            assert unmet(TASKS[it.task].requires, bench.case(it.case_id)) is None, (it.task, it.case_id)
    skipped = bench.manifest["skipped"]
    reasons = {r.reason for r in REQUIREMENTS.values()}
    for task, per in skipped.items():  # a contract skip is counted under a task that declares it
        for reason in per:
            if reason in reasons:
                assert any(REQUIREMENTS[r].reason == reason for r in TASKS[task].requires), (task, reason)


def test_sample_states_what_it_knows(sample_bench: Bench) -> None:
    """The sample's backgrounds whose findings are unknown (cr-chest shows round masses) are incomplete, and the
    contract is exercised: tasks are skipped for it, while complete (template) cases still get them."""
    by_bg: dict[str, set[Any]] = {}
    for c in sample_bench.cases:
        by_bg.setdefault(c.meta["background_key"], set()).add(c.meta["findings_complete"])
        assert c.meta["structures_complete"] is (c.meta["background_key"] == "nuclei")  # hand-made instance masks
        assert isinstance(c.meta["lateralising"], bool)
    for key in ("cr-chest", "ct-head", "mr-liver", "cxr-pneumonia"):
        assert by_bg.get(key, {False}) == {False}, key
    skipped = sample_bench.manifest["skipped"]
    assert skipped["s3.absent_finding"].get(REQUIREMENTS["absence_stated"].reason)
    assert skipped["s1.orientation"].get(REQUIREMENTS["lateralising"].reason)
    assert any(it.task == "s3.absent_finding" for it in sample_bench.items)


# --------------------------------------------------------------------------- the check itself, over generated cases

_flag = st.sampled_from([True, False, None])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flags=st.tuples(*[_flag] * len(FLAGS)), which=st.integers(0, 11), modality=st.sampled_from(
    ["CT", "MRI", "X-ray", "histopathology", "fundus photography"]))
def test_contract_checked_for_every_task(tmp_path: Path, flags: tuple[bool | None, ...], which: int,
                                         modality: str) -> None:
    """Whatever a case declares (true, false or nothing for each flag), a task whose contract it does not meet is
    skipped with the contract's reason, and every task that ran met its contract; undeclared is unknown."""
    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(12)]
    meta: dict[str, Any] = {k: v for k, v in zip(FLAGS, flags, strict=True) if v is not None}
    if "discriminable" in meta:  # a list: true declares the case's mimics told apart, false declares none
        meta["discriminable"] = list(cases[which].mimics) if meta["discriminable"] else []
    case = cases[which].model_copy(update={"meta": meta, "modality": modality})
    out = draft_case(case, LabelPools.from_cases([*cases, case]), seed=0, split="train", images=store)
    for spec in TASKS.values():
        missing = unmet(spec.requires, case)
        if missing is not None:
            assert out.skipped.get(spec.id) == missing.reason
            assert all(d.task != spec.id for d in out.drafts)
    declared = {k for k, v in meta.items() if v is True or (isinstance(v, list) and v)}
    abnormal = bool(case.findings) or (case.diagnosis is not None and not vocab.is_normal(case.diagnosis))
    backing = {  # each requirement, restated from what the case declares
        "findings_complete": "findings_complete" in declared,
        "absence_stated": "findings_complete" in declared or bool(case.absent),
        "structures_complete": "structures_complete" in declared,
        "one_lesion": bool({"one_lesion", "findings_complete"} & declared),
        "one_per_label": bool({"one_lesion", "findings_complete", "instances_complete"} & declared),
        "normality_known": abnormal or "findings_complete" in declared,
        "lateralising": "lateralising" in declared and vocab.orientation_defined(modality),
        "severity_graded": "severity_graded" in declared,
        "discriminable": "discriminable" in declared,
        # issue 40 (fix40f): a benign/malignant label only where every diagnosis the image cannot rule out (its own,
        # its mimics not declared told apart, the source's and the vocabulary's) has that class, or declared so
        "malignancy_decidable": _malignancy_backed(case, declared),
        "evidence_readable": True,  # no evidence SSIM declared: an image nobody degraded is readable
        # issue 40 (fix40k): no rendering measured (attributes.rendered): a finding's words and size are its reader's
        "appearance_shown": True,
        "size_bounded": True,
        # issue 49: what the source links to the case (buildtest's first six cases link a prior, view or sequence)
        "has_prior": any(c.role == "prior" for c in case.companions),
        "has_views": any(c.role == "view" for c in case.companions),
        "has_sequences": any(c.role == "sequence" for c in case.companions),
        # issue 40: an image its source grades reject is not read; a composed report states a lesion or a normal
        # state only where the labels back it (a report the source did not compose is the reader's own)
        "readable": not (case.quality and vocab.same(case.quality, "reject")),
        "report_grounded": "report" not in case.synthetic_fields
        or (bool({"one_lesion", "findings_complete"} & declared) and (abnormal or "findings_complete" in declared)),
        # issue 40 (fix40l): a structure whose outline the image shows, as the build measured it when it realised the
        # case (meta.outline_contrast); these cases were not realised by a build: nothing measured, nothing shown
        "outlines_visible": bool(case.meta.get("outline_contrast")),
    }
    assert set(backing) == set(REQUIREMENTS)
    for d in out.drafts:
        assert all(backing[r] for r in TASKS[d.task].requires), (d.task, meta)


def _malignancy_backed(case: Case, declared: set[str]) -> bool:
    label, dx = case.malignancy, case.diagnosis
    if not label or "malignancy_discriminable" in declared:
        return True
    told = {vocab.norm(str(d)) for d in (case.meta.get("discriminable") or [])}
    differential = [*case.mimics, *clinical.mimics(dx)] if dx else []
    cannot_rule_out = [dx, *(m for m in differential if vocab.norm(m) not in told)]
    return bool(differential) and all(clinical.malignancy(str(d)) == label for d in cannot_rule_out)


def test_contract_written_beside_each_task() -> None:
    """docs/tasks.md states each task's contract, as the registry declares it."""
    doc = (Path(__file__).resolve().parents[1] / "docs" / "tasks.md").read_text("utf-8")
    rows = {m.group(1): m.group(2).strip() for m in re.finditer(r"^\| \d \| `([\w.]+)` \|(?:[^|\n]*\|){5}([^|\n]*)\|",
                                                                   doc, re.MULTILINE)}
    assert set(rows) == set(TASKS)
    for spec in TASKS.values():
        assert rows[spec.id] == contract_text(spec.requires), spec.id


# --------------------------------------------------------------------------- no machine path in a bench

_ABSOLUTE = re.compile(r"^(/[^/\s]|[A-Za-z]:[\\/]|\\\\)")


def _strings(v: Any) -> Iterator[str]:
    if isinstance(v, str):
        yield v
        if v[:1] in "{[":
            try:
                parsed = json.loads(v)
            except ValueError:
                parsed = None
            yield from _strings(parsed)
    elif isinstance(v, dict):
        for k, x in v.items():
            yield str(k)
            yield from _strings(x)
    elif isinstance(v, list | tuple):
        for x in v:
            yield from _strings(x)


def _bench_strings(root: Path) -> Iterator[tuple[str, str]]:
    for f in sorted(root.rglob("*")):
        if f.suffix == ".parquet":
            t = pq.read_table(f)
            for name in t.column_names:
                for s in _strings(t.column(name).to_pylist()):
                    yield f"{f.name}:{name}", s
        elif f.suffix == ".json":
            for s in _strings(json.loads(f.read_text("utf-8"))):
                yield f.name, s
        elif f.suffix == ".jsonl":
            for line in f.read_text("utf-8").splitlines():
                for s in _strings(json.loads(line)):
                    yield f.name, s


def test_no_absolute_path_in_any_bench_file(built: Path) -> None:
    """Every string of every bench file (cases.parquet, items.parquet, manifest.json, quarantine.jsonl, ...):
    no absolute path of the machine that built it (the sample's background files included)."""
    seen = 0
    for where, s in _bench_strings(built):
        seen += 1
        assert not _ABSOLUTE.match(s), (where, s[:200])
    assert seen


# --------------------------------------------------------------------------- medr2 info --quality

def test_info_quality_per_task(built: Path) -> None:
    """``medr2 info --quality --json``: per task, the clean items the bench holds, the skips the build counted, and
    the contract the registry declares (on the command line, as a user runs it)."""
    import subprocess
    import sys

    r = subprocess.run([sys.executable, "-m", "medr2.cli", "info", str(built), "--quality", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    quality = json.loads(r.stdout)
    bench = load_bench(built)
    assert list(quality) == [row["id"] for row in bench.manifest["tasks"]]
    for task, q in quality.items():
        assert q["items"] == sum(1 for it in bench.items if it.task == task and it.variant == "clean")
        assert q["skipped"] == bench.manifest["skipped"].get(task, {})
        assert q["contract"] == contract_text(TASKS[task].requires)
        by_contract = {REQUIREMENTS[r].reason for r in TASKS[task].requires}
        assert q["skipped_by_contract"] == sum(n for reason, n in q["skipped"].items() if reason in by_contract)
    r = subprocess.run([sys.executable, "-m", "medr2.cli", "info", str(built), "--quality"], capture_output=True,
                       text=True, timeout=120, env={**__import__("os").environ, "COLUMNS": "250"})
    assert r.returncode == 0 and "answerable only if" in r.stdout


# --------------------------------------------------------------------------- a user's label table declares them

@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(flag=st.sampled_from([f for f in FLAGS if f != "discriminable"]),
       value=st.sampled_from(["true", "TRUE", "yes", "1", "false", "no", "0", ""]))
def test_label_table_declares_flags(tmp_path_factory: pytest.TempPathFactory, flag: str, value: str) -> None:
    """``meta.<flag>`` columns of a ``folder`` label table become booleans (empty: undeclared); a value that is
    neither is quarantined naming file, record and field."""
    from medr2.sources.base import get_source
    from tests.interop_fixtures import gradient, realize_all, write_png

    data = tmp_path_factory.mktemp("lt") / "data"
    write_png(data / "a.png", gradient(30, 40))
    write_png(data / "b.png", gradient(30, 40, 1))
    (data / "labels.csv").write_text(f"image,modality,diagnosis,meta.{flag}\na.png,CT,normal,{value}\n"
                                     "b.png,CT,normal,perhaps\n")
    cases, errors = realize_all(get_source(f"folder:{data}"), data.parent / "bench")
    assert [c.meta["file"] for c in cases] == ["a.png"]
    want = None if value == "" else value.lower() in ("true", "yes", "1")
    assert cases[0].meta.get(flag) is want
    assert [(e.record, e.field) for e in errors] == [("b.png", f"meta.{flag}")]
    assert errors[0].file.endswith("labels.csv")


def test_label_table_declares_discriminable(tmp_path: Path) -> None:
    """``meta.discriminable`` of a label table is a ``;``-separated list, as ``mimics``; it makes the
    differential answerable."""
    from medr2.sources.base import get_source
    from medr2.tasks.contract import discriminable
    from tests.interop_fixtures import gradient, realize_all, write_png

    data = tmp_path / "data"
    write_png(data / "a.png", gradient(30, 40))
    (data / "labels.csv").write_text("image,modality,diagnosis,mimics,meta.discriminable\n"
                                     "a.png,CT,glioma,lymphoma;abscess,abscess; glioma ;\n")
    cases, errors = realize_all(get_source(f"folder:{data}"), tmp_path / "bench")
    assert not errors
    assert cases[0].meta["discriminable"] == ["abscess", "glioma"]
    assert discriminable(cases[0]) == ["abscess"]  # the case's own diagnosis is no alternative
    assert unmet(("discriminable",), cases[0]) is None


# --------------------------------------------------------------------------- options that contain each other

def test_no_options_contain_each_other(built: Path) -> None:
    """No single-answer MCQ offers a wrong option that is a sub-type or a part of its answer (or the reverse), and no
    question compares a structure with its own part (the clinical vocabulary's is-a and part-of)."""
    bench = load_bench(built)
    for it in bench.items:
        if it.variant != "clean":
            continue
        if it.form == "mcq" and it.answer:
            right = it.options[letter_index(it.answer)]
            assert not any(vocab.contains(o, right) for o in it.options if o != right), (it.task, it.options)
        x, y = it.meta.get("x"), it.meta.get("y")
        if x and y:
            assert not vocab.contains(str(x), str(y)), (it.task, x, y)


_PART_WHOLE = [("white matter", "brain"), ("grey matter", "brain"), ("left lung", "lung"), ("cerebellum", "brain"),
               ("glioblastoma", "glioma"), ("lumbar spine", "spine")]
_APART = ["liver", "kidney", "heart", "spleen", "meningioma", "fracture"]


@settings(max_examples=30, deadline=None)
@given(pair=st.sampled_from(_PART_WHOLE), others=st.lists(st.sampled_from(_APART), min_size=1, max_size=3, unique=True),
       article=st.booleans(), nested=st.integers(0, 2))
def test_shared_option_check_refuses_nested_options(pair: tuple[str, str], others: list[str], article: bool,
                                                    nested: int) -> None:
    """``check_options`` (every task's drafts pass it) skips an MCQ whose wrong option contains its answer or is part
    of it, written with or without "the" (as s2.size_compare writes them), and keeps one without."""
    from medr2 import Draft, Skip
    from medr2.tasks.assemble import check_options

    def name(x: str) -> str:
        return f"the {x}" if article else x

    case = Case(case_id="c", image="images/c.png", image_sha256="0", width=8, height=8, modality="MRI",
                source="s", license="l", patient_id="p")
    right, wrong = (pair[0], pair[1]) if nested % 2 else (pair[1], pair[0])
    d = Draft("s2.size_compare", "mcq", "Which is larger?", "t1", correct=name(right),
              distractors=[*([name(wrong)] if nested else []), *(name(o) for o in others)])
    if nested:
        with pytest.raises(Skip):
            check_options(case, d)
    else:
        check_options(case, d)


# --------------------------------------------------------------------------- the evidence clause, declared per task

def test_evidence_clause_is_each_tasks_declared_requirement(tmp_path: Path) -> None:
    """The evidence clause is a requirement each task declares (``TaskSpec.requires``), not a rule of its stage: on a
    case whose own degradation left the lesion evidence unreadable, every task of the registry that declares it is
    skipped with its reason once its other clauses hold, and no task that does not declare it is; every built-in task
    that reads lesion evidence (a finding, diagnosis or report: stages 3 and 4) declares it, no stage-1/2 task does;
    and a plugin's stage-3 task that reads none is asked."""
    from medr2 import Draft, Skip
    from medr2.imaging.physics import MIN_EVIDENCE_SSIM
    from medr2.tasks.contract import EVIDENCE_LOST
    from medr2.tasks.spec import task

    store = ImageStore(tmp_path)
    cases = [make_case(Spec(f"c{i}", i), store) for i in range(12)]
    for spec in TASKS.values():
        assert ("evidence_readable" in spec.requires) == (spec.stage >= 3), spec.id

    @task("plugin.no_evidence", 3, "yesno", "a stage-3 question that reads no lesion", "nothing",
          ["Is this a medical image?", "Is this image a medical one?", "Was this image made for medicine?"])
    def _plugin(case: Case, ctx: Any) -> list[Draft]:
        if case.width <= 0:
            raise Skip("no image")
        return [Draft(task="plugin.no_evidence", form="yesno", question="Is this a medical image?", correct="yes",
                      template_id="plugin.no_evidence/t1")]

    try:
        for low in (0.0, MIN_EVIDENCE_SSIM / 2, MIN_EVIDENCE_SSIM - 1e-6):
            for base in cases:
                case = base.model_copy(update={"meta": {**base.meta, "evidence_ssim": low}})
                out = draft_case(case, LabelPools.from_cases(cases), seed=0, split="train", images=store)
                for spec in TASKS.values():
                    before = unmet(tuple(r for r in spec.requires if r != "evidence_readable"), case)
                    if "evidence_readable" in spec.requires and before is None:
                        assert out.skipped.get(spec.id) == EVIDENCE_LOST, (spec.id, out.skipped.get(spec.id))
                    elif "evidence_readable" not in spec.requires:
                        assert out.skipped.get(spec.id) != EVIDENCE_LOST, spec.id
                assert "plugin.no_evidence" not in out.skipped
                assert any(d.task == "plugin.no_evidence" for d in out.drafts)
    finally:
        TASKS.pop("plugin.no_evidence")
