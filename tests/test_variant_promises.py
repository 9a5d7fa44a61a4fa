"""Variants do what their kind promises (issue #40, kinds 6 and 2): properties over built benches of every
source (the sample at two seeds, ``variants="all"``; the reader fixture of tests/perturb_fixtures.py), each asserted
for every variant of its kind. The kinds are found by what the registry's perturbations produce, not a hand list.

- a misleading premise (T3, T9, T10: every item stating a ``fact``) states a value plausible for the image's
  modality and body region: true of a case of the same modality and region, or named by the vocabulary for that
  region, never the modality or the region itself;
- a counterfactual (V4) image shows no lesion left: every lesion (its halo included) inside the inpainted region and
  the region leaving no trace (contrast, texture, border edge, outline, seam: ``medr2.perturb.trace``);
- a drawn cue (clean cue items, V5, V6) and a coloured burnt-in text (V10) are drawn in a colour far from every
  colour of the image they are drawn on;
- every degradation (an item with a ``severity``: V8, V11) keeps an exact answer only where the evidence its
  question reads survives, by its task's contract (SSIM within the lesions for a lesion question, measured again
  here; of the whole image for one on the image's content; an acquisition question stays exact), and a report
  reference names the artefact shown.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from medr2 import Bench, Case, Item
from medr2.bench.format import load_bench
from medr2.images import load_image
from medr2.imaging.degrade import ARTEFACT_LABELS as DEGRADE_LABELS
from medr2.imaging.draw import CUE_COLOR_FAR, CUE_PALETTE, box_mask, colour_margin, image_colours
from medr2.imaging.physics import ARTEFACT_LABELS as PHYSICS_LABELS, ssim
from medr2.imaging.typographic import TEXT_STYLES
from medr2.perturb.degraded import MIN_EVIDENCE_SSIM, DegradingPerturbation
from medr2.perturb.engine import generate_variants
from medr2.perturb.facts import FACTS, setting
from medr2.perturb.registry import PERTURBATIONS, load_perturbations
from medr2.perturb.trace import removal_traces
from medr2.perturb.visual import EvidenceRemoval, lesion_removal_region, tissue_mask
from medr2.tasks.contract import EVIDENCE_LOST, NOT_READABLE, question_evidence, readable, task_requires
from medr2.tasks.vocab import builtin_for_region, conflicts, norm
from tests.perturb_fixtures import build_fixture

REGION_KEYS = {"finding": "finding", "diagnosis": "diagnosis", "structure": "organ"}  # fact -> region vocabulary


# --------------------------------------------------------------------------- benches
class Built:
    """A bench's cases and items, and a way to read its images (stored or deferred)."""

    def __init__(self, root: Path, cases: list[Case], items: list[Item], bench: Bench | None = None) -> None:
        self.root, self.cases, self.items, self.bench = root, {c.case_id: c for c in cases}, items, bench
        self.by_id = {it.item_id: it for it in items}

    def image(self, rel: str) -> np.ndarray:
        if self.bench is not None:
            return load_image(self.bench.path(rel))
        return load_image(self.root / rel)

    def mask(self, rel: str) -> np.ndarray:
        return self.image(rel) > 127


def _built_sample(root: Path, seed: int) -> Built:
    from medr2.builder.pipeline import build_bench

    build_bench("sample", root, seed=seed, n_cases=14, variants="all", workers=1)
    bench = load_bench(root)
    return Built(root, bench.cases, bench.items, bench)


@pytest.fixture(scope="module")
def fixture_bench(tmp_path_factory: pytest.TempPathFactory) -> Built:
    root = tmp_path_factory.mktemp("promises-fixture")
    fx = build_fixture(root)
    variants, _ = generate_variants(root, fx.cases, fx.items, "all", 0, fx.images, workers=1)
    return Built(root, fx.cases, [*fx.items, *variants])


@pytest.fixture(scope="module", params=[7, 11])
def sample_bench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    return _built_sample(tmp_path_factory.mktemp(f"promises-sample-{request.param}"), request.param)


def _of(built: Built, pred) -> Iterator[tuple[Item, Case]]:  # type: ignore[no-untyped-def]
    for it in built.items:
        if it.variant != "clean" and pred(it):
            yield it, built.cases[it.case_id]


def _codes_with(built: Built, pred) -> set[str]:  # type: ignore[no-untyped-def]
    return {it.variant.split("-")[0] for it, _ in _of(built, pred)}


# --------------------------------------------------------------------------- premises
def _premise_items(built: Built) -> list[tuple[Item, Case]]:
    return list(_of(built, lambda it: "fact" in it.perturbation and "stated" in it.perturbation
                    and it.perturbation["fact"] in FACTS))


def check_premises(built: Built) -> set[str]:
    setting: dict[tuple[str, str], dict[str, set[str]]] = {}
    for c in built.cases.values():
        pool = setting.setdefault((norm(c.modality), norm(c.body_region or "")), {})
        for key, fk in FACTS.items():
            if fk.get(c):
                pool.setdefault(key, set()).add(norm(str(fk.get(c))))
        pool.setdefault("finding", set()).update(norm(f.label) for f in c.findings)
    items = _premise_items(built)
    assert items
    for it, case in items:
        key, stated = it.perturbation["fact"], str(it.perturbation["stated"])
        assert key not in ("modality", "body_region"), (it.variant, key, stated)
        known = setting[(norm(case.modality), norm(case.body_region or ""))].get(key, set())
        vocab = {norm(v) for v in builtin_for_region(REGION_KEYS.get(key, ""), case.modality, case.body_region)} \
            if key in REGION_KEYS else set()
        assert norm(stated) in known | vocab, (it.variant, case.modality, case.body_region, key, stated)
        own = [FACTS[key].get(case)] + ([f.label for f in case.findings] if key == "finding" else [])
        assert not any(o and (norm(o) == norm(stated) or conflicts(stated, o)) for o in own), (key, stated, own)
    return {it.variant.split("-")[0] for it, _ in items}


# --------------------------------------------------------------------------- V4
def check_counterfactuals(built: Built) -> int:
    """Every V4 image: its lesions (and their halo, measured as V4 measures it) lie in the region it repainted, the
    pixels outside are the clean image's, and the repainted region leaves no trace a reader would see (the one
    measure, :func:`medr2.perturb.trace.removal_traces`, within :data:`medr2.perturb.trace.LIMITS`: contrast,
    texture, border edge, outline, seam)."""
    n = 0
    for it, case in _of(built, lambda it: it.meta.get("counterfactual") is True):
        assert it.image is not None
        after = built.image(it.image)
        before = built.image(case.image)
        lesions = [built.mask(f.mask) if f.mask else box_mask(f.box, case.width, case.height) for f in case.findings]
        region = lesion_removal_region(lesions, before, int(it.perturbation["dilate_px"]))
        changed = np.any(after != before, axis=-1) if after.ndim == 3 else after != before
        assert not (changed & ~region).any(), it.item_id  # pixels outside the removed region are untouched
        for f, lesion in zip(case.findings, lesions, strict=True):
            assert (lesion <= region).all(), (it.item_id, f.label)
            # the lesion lies in the region the variant repainted (a pixel of identical grey aside)
            assert (changed & lesion).sum() >= 0.9 * lesion.sum(), (it.item_id, f.label)
        traces = removal_traces(after, region, tissue_mask(after))
        for t in traces:
            assert not t.failed(), (it.item_id, t)
        n += 1
    return n


# --------------------------------------------------------------------------- cue colours
def _far_enough(color: list[int], base: np.ndarray, prefer: tuple[int, int, int]) -> bool:
    colours = image_colours(base)
    margin = colour_margin(color, colours)
    best = max(colour_margin(c, colours) for c in (prefer, *CUE_PALETTE))
    return margin >= CUE_COLOR_FAR or margin == best


def check_cue_colours(built: Built) -> set[str]:
    seen: set[str] = set()
    for it in built.items:
        if it.cue is None or not it.cue.drawn or it.cue.kind == "coords":
            continue
        case = built.cases[it.case_id]
        if it.variant != "clean" and it.variant.split("-")[0] not in ("V5", "V6"):
            continue  # a variant that keeps its parent's cue (redrawn as it was) is checked as the parent
        base = built.image(str(it.meta.get("base_image") or case.image)) if it.variant == "clean" \
            else built.image(built.by_id[it.parent_id or ""].image or case.image)
        assert _far_enough(it.cue.style["color"], base, CUE_PALETTE[0]), (it.item_id, it.cue.style["color"])
        seen.add(it.variant.split("-")[0])
    for it, case in _of(built, lambda it: "ink" in it.perturbation or "style" in it.perturbation):
        style = str(it.perturbation.get("style"))
        if style not in TEXT_STYLES:
            continue
        fill = tuple(TEXT_STYLES[style]["fill"])
        parent = built.by_id[it.parent_id or ""]
        drawn = parent.cue is not None and parent.cue.drawn
        base = built.image(str(parent.meta.get("base_image") or case.image) if drawn else parent.image or case.image)
        if base.ndim == 2 or fill == (255, 255, 255):
            assert "ink" not in it.perturbation
            continue
        colour = list(it.perturbation.get("ink", fill))
        assert _far_enough(colour, base, fill), (it.item_id, colour)  # type: ignore[arg-type]
        seen.add(it.variant.split("-")[0])
    return seen


# --------------------------------------------------------------------------- degradations
def check_degradations(built: Built, recompute: int = 6) -> set[str]:
    items = list(_of(built, lambda it: "severity" in it.perturbation and "kind" in it.perturbation))
    assert items
    labels = {**DEGRADE_LABELS, **PHYSICS_LABELS}
    for i, (it, case) in enumerate(items):
        local = it.meta["evidence_ssim"]
        # the evidence the question reads, by its task's contract: the lesions', the whole image's, or none
        needed = question_evidence(task_requires(it.task))
        read = {"lesion": local, "image": it.meta["ssim"], "none": 1.0}[needed]
        exact = read >= MIN_EVIDENCE_SSIM
        assert (it.meta["scoring"] == "exact") is exact, (it.variant, it.task, needed, read, it.meta["scoring"])
        assert ("preserves_answer" in it.roles) is exact
        parent = built.by_id[it.parent_id or ""]
        if i < recompute:  # the SSIM recorded is the SSIM of the image shown, within the lesions
            assert it.image is not None and parent.image is not None
            shown, deg = built.image(parent.image), built.image(it.image)
            boxes = [f.box for f in case.findings] if shown.shape[:2] == (case.height, case.width) else []
            want = min((round(ssim(deg, shown, b), 4) for b in boxes), default=round(ssim(deg, shown), 4))
            assert abs(want - local) < 1e-3, (it.variant, want, local)
        if parent.form == "text" and case.report and parent.answer.strip() == case.report.strip():
            label = labels[str(it.perturbation["kind"])]
            assert label in it.answer, (it.variant, it.answer)
            assert it.answer.count("Image quality is") == 1
    return {it.variant.split("-")[0] for it, _ in items}


def _degrading_codes() -> set[str]:
    return {code for code, cls in load_perturbations().items() if issubclass(cls, DegradingPerturbation)}


# --------------------------------------------------------------------------- issue 40 kinds 5 and 6 (variants)
def check_marks_hide_nothing(built: Built) -> set[str]:
    """Every item whose image is its case's image with a cue drawn on it (clean cue items, V5, V6) leaves the
    marked region (the cue's mask, else its box) as the case image shows it: the mark lies outside what it marks.
    Returns the variants seen (``clean`` among them)."""
    from medr2.imaging.draw import box_mask, to_rgb
    from medr2.perturb.visual import cue_mask_path

    seen: set[str] = set()
    for it in built.items:
        cue = it.cue
        case = built.cases[it.case_id]
        if cue is None or not cue.drawn or cue.kind == "mask" or it.variant.split("-")[0] not in ("clean", "V5", "V6"):
            continue
        assert it.image is not None
        shown, base = built.image(it.image), to_rgb(built.image(case.image))
        if shown.shape != base.shape:
            continue
        rel = cue_mask_path(cue, case)
        region = built.mask(rel) if rel and cue.kind == "contour" else box_mask(cue.box, shown.shape[1],
                                                                                shown.shape[0])
        assert np.array_equal(shown[region], base[region]), (it.item_id, it.variant, cue.kind)
        seen.add(it.variant.split("-")[0])
    return seen


def check_option_and_prompt_layouts(built: Built) -> set[str]:
    """Every item: "none/all of the above" is the last option (it refers to the options above it); a V7 question
    names the region of interest and never its coordinates, which the prompt states once; a T1 item is filed under
    the task of the fact it asks. Returns the codes checked."""
    from medr2.models.base import BoxConvention
    from medr2.perturb.text import T1_TASKS
    from medr2.run.prompts import question_text
    from medr2.tasks import TASKS
    from medr2.tasks.vocab import FIXED_OPTION
    from medr2.vocab.english import attribute_words

    box = re.compile(r"\[\d+(?:\.\d+)?, \d+(?:\.\d+)?, \d+(?:\.\d+)?, \d+(?:\.\d+)?\]")
    seen: set[str] = set()
    for it in built.items:
        code = it.variant.split("-")[0]
        fixed = [i for i, o in enumerate(it.options) if FIXED_OPTION.match(o)]
        assert fixed == list(range(len(it.options) - len(fixed), len(it.options))), (it.variant, it.options)
        if fixed:
            seen.add(code)
        if code == "V7":
            assert not box.search(it.question) and "region of interest" in it.question, it.question
            assert len(box.findall(question_text(it, BoxConvention()))) == 1
            seen.add(code)
        if code == "T1":
            assert it.task == T1_TASKS[it.perturbation["family"]] and it.stage == TASKS[it.task].stage
            if it.perturbation["family"] == "attribute":  # the false value is one a case of its setting has
                case = built.cases[it.case_id]
                here = {said for c in built.cases.values() if setting(c) == setting(case) for f in c.findings
                        for k, v in f.attributes.items() if isinstance(v, str) and v
                        and (said := attribute_words(k, v)) is not None}  # as T1 says it ("in the midline")
                assert any(it.question.rstrip("?").endswith(f" {said}") for said in here), it.question
            seen.add(code)
    return seen


def check_structures_are_anatomy(built: Built) -> int:
    """No item keys, offers or asks about a structure that names no anatomy (a colour-flow mask, a body threshold):
    every structure of a case that :func:`medr2.tasks.contract.is_anatomy` refuses is absent from every item's
    question, options and answer (a bench the tasks built: the reader fixture's items are hand-made). Returns how
    many such structures the bench's cases carry."""
    from medr2.tasks.contract import is_anatomy

    refused = {norm(s.name) for c in built.cases.values() for s in c.structures if not is_anatomy(s)}
    for it in built.items:
        texts = [it.question, *it.options, it.answer_text if it.form == "mcq" else it.answer,
                 str(it.meta.get("target", ""))]
        assert not refused & {norm(t) for t in texts}, (it.task, it.variant, texts)
        assert not any(re.search(rf"\bthe {re.escape(r)}\b", it.question, re.IGNORECASE) for r in refused), texts
    return len(refused)


def check_swaps(built: Built) -> set[str]:
    """V2, V3 and V12: the other case's image is shown letterboxed to the frame (:func:`medr2.imaging.fit.fit_image`,
    its aspect kept), and an exact answer only where the other case meets the task's contract."""
    from medr2.imaging.fit import fit_image
    from medr2.tasks.contract import task_requires, unmet

    seen: set[str] = set()
    for it, _ in _of(built, lambda it: it.variant in ("V2", "V3", "V12") and "other_case" in it.perturbation):
        other = built.cases[it.perturbation["other_case"]]
        if it.meta.get("scoring") == "exact":
            assert unmet(task_requires(it.task), other) is None, (it.variant, it.task, other.case_id)
        if it.cue is None or not it.cue.drawn:
            assert it.image is not None
            want = fit_image(built.image(other.image), it.image_width or 0, it.image_height or 0)
            assert np.array_equal(built.image(it.image), want), (it.variant, it.item_id)
        seen.add(it.variant)
    return seen


# --------------------------------------------------------------------------- tests
def test_fixture_variants_keep_the_promises_of_issue_40_kinds_5_and_6(fixture_bench: Built) -> None:
    assert {"clean", "V5", "V6"} <= check_marks_hide_nothing(fixture_bench)
    assert {"T1", "T7", "V7"} <= check_option_and_prompt_layouts(fixture_bench)
    assert {"V2", "V3"} <= check_swaps(fixture_bench)


def test_every_image_degrading_variant_goes_through_the_one_gate(fixture_bench: Built) -> None:
    # every registered variant whose items degrade the image at a severity is a DegradingPerturbation
    made = check_degradations(fixture_bench)
    assert made and made <= _degrading_codes()
    assert _degrading_codes() <= {c for c in PERTURBATIONS.names()}


def test_fixture_premises_plausible(fixture_bench: Built) -> None:
    codes = check_premises(fixture_bench)
    assert codes  # which codes state premises is what the registry's perturbations produce


def test_fixture_counterfactuals_show_no_lesion(fixture_bench: Built) -> None:
    assert check_counterfactuals(fixture_bench) > 0


def test_fixture_cue_colours_stand_out(fixture_bench: Built) -> None:
    assert {"V5", "V6"} <= check_cue_colours(fixture_bench)


@pytest.mark.slow
def test_sample_bench_variants_keep_their_promises(sample_bench: Built) -> None:
    premises = check_premises(sample_bench)
    assert premises == _codes_with(sample_bench, lambda it: "stated" in it.perturbation and "fact" in
                                   it.perturbation)
    check_counterfactuals(sample_bench)
    check_cue_colours(sample_bench)
    made = check_degradations(sample_bench)
    assert made <= _degrading_codes()
    assert {"V5"} <= check_marks_hide_nothing(sample_bench)
    assert {"T1", "T7", "V7"} <= check_option_and_prompt_layouts(sample_bench)
    check_structures_are_anatomy(sample_bench)
    assert {"V2", "V3"} <= check_swaps(sample_bench)
    skipped = json.loads((sample_bench.root / "manifest.json").read_text("utf-8"))["variants_skipped"]
    assert set(skipped) == set(PERTURBATIONS.names())  # every registered variant was asked for


# --------------------------------------------------------------------------- ordinal scales, lesion words (issue 40)
SINGULAR = re.compile(r"\bthe lesion\b", re.IGNORECASE)
PLURAL = re.compile(r"\bthe lesions\b", re.IGNORECASE)


def check_ordinal_layouts(built: Built) -> set[str]:
    """Every variant item whose option set is ordinal (:data:`medr2.tasks.vocab.ORDINAL_SCALES`: severity, quality,
    counts, sizes; a fixed "none of the above" aside) shows it in the scale's order or its reverse, never shuffled;
    T6 reverses it. Returns the codes that showed one."""
    from medr2.tasks.vocab import in_scale_order, ordinal_options

    codes: set[str] = set()
    for it, _ in _of(built, lambda it: bool(it.options) and ordinal_options(it.options) is not None):
        found = ordinal_options(it.options)
        assert found is not None
        ranked, scale = found
        ordered = in_scale_order(ranked, scale)
        assert ranked in (ordered, ordered[::-1]), (it.variant, it.task, it.options)
        if it.variant == "T6":
            parent = built.by_id[it.parent_id or ""]
            assert ranked == ordinal_options(parent.options)[0][::-1], (parent.options, it.options)  # type: ignore[index]
        codes.add(it.variant.split("-")[0])
    return codes


def check_exclusive_options(built: Built) -> set[str]:
    """Every variant item's options are mutually exclusive (no is-a / part-of pair): the options a variant puts in
    (another case's value, "none of the above") pass the same rule as the clean ones. Returns the codes checked."""
    from medr2.tasks.vocab import nested_options

    codes: set[str] = set()
    for it, _ in _of(built, lambda it: it.form in ("mcq", "multi") and bool(it.options)):
        assert nested_options(it.options) is None, (it.variant, it.task, it.options)
        codes.add(it.variant.split("-")[0])
    return codes


def _written(built: Built, it: Item) -> list[str]:
    """The text a variant wrote from the case's facts: its question less the clean question it extends, and its
    context turns that replay no clean question of the case (T8 replays the chain's own steps)."""
    parent = built.by_id.get(it.parent_id or "")
    clean = {c.question for c in built.items if c.case_id == it.case_id and c.variant == "clean"}
    out = [it.question.replace(parent.question, " ")] if parent and parent.question in it.question else []
    out += [f"{t.question} {t.answer}" for t in it.context
            if t.question not in clean and (parent is None or t not in parent.context)]
    return out


def check_lesion_words(built: Built) -> set[str]:
    """Every text a variant writes from case facts names the case's lesions in their number: no "the lesion" of a
    case with two or more findings, no "the lesions" of one with one or none. Returns the codes that named them."""
    codes: set[str] = set()
    for it, case in _of(built, lambda it: True):
        for text in _written(built, it):
            if not (SINGULAR.search(text) or PLURAL.search(text)):
                continue
            codes.add(it.variant.split("-")[0])
            several = len(case.findings) >= 2
            assert not (several and SINGULAR.search(text)), (it.variant, len(case.findings), text)
            assert not (not several and PLURAL.search(text)), (it.variant, len(case.findings), text)
    return codes


# the variants that write options or text from case facts (every registered one but those that only change the
# image: the degradations, V4's inpainting, V10's burnt-in text; the fixture bench runs every one)
def _text_and_option_codes() -> list[str]:
    from medr2.perturb.typographic import TypographicInjection

    load_perturbations()
    image_only = (DegradingPerturbation, EvidenceRemoval, TypographicInjection)
    return [c for c in PERTURBATIONS.names() if not issubclass(PERTURBATIONS[c], image_only)]


@pytest.fixture(scope="module", params=[7, 11])
def sample_text_bench(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Built:
    from medr2.builder.pipeline import build_bench

    root = tmp_path_factory.mktemp(f"words-sample-{request.param}")
    build_bench("sample", root, seed=request.param, n_cases=40, variants=",".join(_text_and_option_codes()),
                workers=1)
    bench = load_bench(root)
    return Built(root, bench.cases, bench.items, bench)


def test_fixture_ordinal_sets_and_lesion_words(fixture_bench: Built) -> None:
    check_ordinal_layouts(fixture_bench)
    check_lesion_words(fixture_bench)
    assert {"T6", "T7"} <= check_exclusive_options(fixture_bench)


def test_sample_ordinal_sets_keep_their_order_under_every_variant(sample_text_bench: Built) -> None:
    codes = check_ordinal_layouts(sample_text_bench)
    assert {"T6", "T7", "V2", "V3"} <= codes, codes  # reordered, replaced, answered for another image
    assert {"T6", "T7", "V2", "V3", "V12"} <= check_exclusive_options(sample_text_bench)


def test_sample_lesion_words_agree_with_the_number_of_lesions(sample_text_bench: Built) -> None:
    codes = check_lesion_words(sample_text_bench)
    assert {"T2", "T3", "T9", "T10", "V5", "V7"} <= codes, codes  # hints, premises, marked lesions


# --------------------------------------------------------------------------- patient sides (kind 2)
@pytest.mark.parametrize("seed", [7, 11])
def test_clean_items_ask_only_what_the_image_shows(tmp_path: Path, seed: int) -> None:
    """Every clean item of a built sample: a question, option or reference naming the patient's left or right only
    on an image that shows the sides (displayed by convention or with a lateralising cue, not mirrored, not a single
    sagittal slice), whatever task made it; the image's own sides (quadrants, relative positions as displayed, the
    orientation question) aside."""
    import re

    from medr2.builder.pipeline import build_bench
    from medr2.tasks.vocab import orientation_defined

    build_bench("sample", tmp_path / "b", seed=seed, n_cases=80, workers=1)
    bench = load_bench(tmp_path / "b")
    side = re.compile(r"\b(left|right)\b", re.IGNORECASE)
    # the image's own sides: relations as displayed, quadrants of the image, the orientation question
    image_side = re.compile(r"to the (left|right) of|(left|right) quadrant of the image|left-to-right", re.IGNORECASE)
    named = hidden = 0
    for it in bench.items:
        case = bench.case(it.case_id)
        texts = [image_side.sub(" ", t) for t in (it.question, *it.options, it.answer)]
        if not any(side.search(t) for t in texts):
            continue
        named += 1
        shows = (orientation_defined(case.modality) or case.meta.get("lateralising") is True) \
            and case.flipped is not True and (case.plane or "").lower() != "sagittal"
        hidden += not shows
        assert shows, (it.task, case.case_id, case.modality, case.plane, case.flipped, it.question)
    assert named and not hidden
    skipped = json.loads((tmp_path / "b" / "manifest.json").read_text("utf-8"))["skipped"]
    assert any("patient side named" in reason for per_task in skipped.values() for reason in per_task), skipped
    # kind 2: no finding question (stage 3, 4) on an image whose own degradation left the lesion evidence unreadable
    # (the SSIM within the lesions the source measured, the measure V8/V11 keep an exact answer by)
    degraded = [c for c in bench.cases if c.meta.get("degradation")]
    assert degraded and all(isinstance(c.meta.get("evidence_ssim"), float) for c in degraded)
    assert all("evidence_ssim" not in c.meta for c in bench.cases if not c.meta.get("degradation"))
    for it in bench.items:
        if it.stage >= 3:
            assert bench.case(it.case_id).meta.get("evidence_ssim", 1.0) >= MIN_EVIDENCE_SSIM, it.item_id
    # a case the degradation made reject-quality is skipped by the readable clause (checked before the evidence
    # clause, issue 40); the others whose lesion evidence was lost by the evidence clause: each counted by its reason
    unreadable = [c for c in degraded if c.meta["evidence_ssim"] < MIN_EVIDENCE_SSIM]
    rejected = [c for c in unreadable if not readable(c)]
    lost = sum(n for per_task in skipped.values() for reason, n in per_task.items() if reason == EVIDENCE_LOST)
    not_read = sum(n for per_task in skipped.values() for reason, n in per_task.items() if reason == NOT_READABLE)
    assert (lost > 0) == (len(rejected) < len(unreadable)), (lost, len(unreadable), len(rejected))
    assert not rejected or not_read > 0, (not_read, len(rejected))


@pytest.mark.parametrize("reader", ["msd-hippocampus", "msd-prostate", "msd", "brats"])
def test_reader_structures_stay_anatomy(reader: str, tmp_path: Path) -> None:
    """Issue 40 kind 5 on the readers' fixtures: a dataset's anatomical labels ("anterior hippocampus", "prostate
    peripheral zone") are anatomy concepts (:func:`medr2.vocab.anatomy_concept`), so the rule that keeps colour-flow
    and body masks out of the tasks takes no reader's organ away; the items of the built bench key or offer none
    that is refused."""
    from medr2.tasks.contract import is_anatomy
    from tests.test_answerability import _reader_bench

    built = load_bench(_reader_bench(tmp_path, reader))
    assert all(is_anatomy(s) for c in built.cases for s in c.structures), reader
    check_structures_are_anatomy(Built(tmp_path, built.cases, built.items, built))
