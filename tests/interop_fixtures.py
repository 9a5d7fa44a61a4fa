"""Small fixtures in the real formats (DICOM via pydicom, NIfTI via nibabel, COCO JSON, label maps)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from medr2.images import ImageStore


def gradient(h: int, w: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = np.add.outer(np.linspace(0, 150, h), np.linspace(0, 80, w))
    return np.clip(base + rng.integers(0, 20, (h, w)), 0, 255).astype(np.uint8)


def write_png(path: Path, arr: np.ndarray) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(arr).save(path)
    return path


def realize_all(src, out: Path, seed: int = 0):  # type: ignore[no-untyped-def]
    """plan + realize every spec; returns (cases, errors) like the builder does."""
    from medr2 import BadInput

    store = ImageStore(out)
    cases, errors = [], []
    for spec in src.plan(seed, None):
        try:
            cases.append(src.realize(spec, store))
        except BadInput as e:
            errors.append(e)
    return cases, errors


# --- DICOM ---------------------------------------------------------------------------------------

CT_IMAGE = "1.2.840.10008.5.1.4.1.1.2"
MR_IMAGE = "1.2.840.10008.5.1.4.1.1.4"
CR_IMAGE = "1.2.840.10008.5.1.4.1.1.1"
SEG_STORAGE = "1.2.840.10008.5.1.4.1.1.66.4"


def _dataset(path: Path, sop_class: str, **tags):  # type: ignore[no-untyped-def]
    from pydicom.dataset import FileDataset, FileMetaDataset
    from pydicom.uid import ExplicitVRLittleEndian, generate_uid

    meta = FileMetaDataset()
    meta.MediaStorageSOPClassUID = sop_class
    meta.MediaStorageSOPInstanceUID = tags.pop("SOPInstanceUID", None) or generate_uid()
    meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds = FileDataset(str(path), {}, file_meta=meta, preamble=b"\0" * 128)
    ds.SOPClassUID = sop_class
    ds.SOPInstanceUID = meta.MediaStorageSOPInstanceUID
    ds.StudyInstanceUID = generate_uid()
    ds.SeriesInstanceUID = generate_uid()
    for k, v in tags.items():
        setattr(ds, k, v)
    return ds


def write_dicom_image(path: Path, pixels: np.ndarray, *, sop_class: str = CT_IMAGE, **tags) -> str:  # type: ignore[no-untyped-def]
    path.parent.mkdir(parents=True, exist_ok=True)
    ds = _dataset(path, sop_class, **tags)
    frames = pixels.shape[0] if pixels.ndim == 3 else 1
    ds.Rows, ds.Columns = pixels.shape[-2], pixels.shape[-1]
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = tags.get("PhotometricInterpretation", "MONOCHROME2")
    ds.BitsAllocated = 16
    ds.BitsStored = 16
    ds.HighBit = 15
    ds.PixelRepresentation = 1 if pixels.dtype == np.int16 else 0
    if frames > 1:
        ds.NumberOfFrames = frames
    ds.PixelData = np.ascontiguousarray(pixels).tobytes()
    ds.save_as(path, enforce_file_format=True)
    return str(ds.SOPInstanceUID)


def write_dicom_seg(path: Path, ref_uid: str, mask: np.ndarray, label: str, category: str) -> None:
    """A minimal DICOM SEG (binary, one frame) referencing frame 1 of ``ref_uid``."""
    from pydicom.dataset import Dataset
    from pydicom.pixels import pack_bits
    from pydicom.sequence import Sequence

    ds = _dataset(path, SEG_STORAGE, Modality="SEG", PatientID="P-CT")
    ds.Rows, ds.Columns = mask.shape
    ds.SamplesPerPixel = 1
    ds.PhotometricInterpretation = "MONOCHROME2"
    ds.BitsAllocated = 1
    ds.BitsStored = 1
    ds.HighBit = 0
    ds.PixelRepresentation = 0
    ds.NumberOfFrames = 1
    ds.SegmentationType = "BINARY"
    seg = Dataset()
    seg.SegmentNumber = 1
    seg.SegmentLabel = label
    cat = Dataset()
    cat.CodeValue, cat.CodingSchemeDesignator, cat.CodeMeaning = "M-01000", "SRT", category
    seg.SegmentedPropertyCategoryCodeSequence = Sequence([cat])
    ds.SegmentSequence = Sequence([seg])
    src = Dataset()
    src.ReferencedSOPClassUID = CT_IMAGE
    src.ReferencedSOPInstanceUID = ref_uid
    src.ReferencedFrameNumber = 1
    der = Dataset()
    der.SourceImageSequence = Sequence([src])
    ident = Dataset()
    ident.ReferencedSegmentNumber = 1
    fg = Dataset()
    fg.DerivationImageSequence = Sequence([der])
    fg.SegmentIdentificationSequence = Sequence([ident])
    ds.PerFrameFunctionalGroupsSequence = Sequence([fg])
    ds.PixelData = pack_bits(mask.astype(np.uint8).ravel())
    ds.save_as(path, enforce_file_format=True)


def make_dicom_folder(root: Path) -> dict[str, str]:
    """CT axial (window + SEG liver + SEG lesion), MR sagittal 3-frame with an overlay, CR PA MONOCHROME1,
    a corrupt .dcm and a non-image (SEG only). Returns SOP UIDs."""
    rng = np.random.default_rng(1)
    ct = (rng.integers(0, 200, (64, 64)) + 900).astype(np.uint16)
    ct[16:44, 12:50] += 300  # the liver the SEG labels, drawn (issue 40: a structure asked about shows its outline)
    ct_uid = write_dicom_image(root / "ct" / "slice1.dcm", ct, Modality="CT", BodyPartExamined="ABDOMEN",
                               PatientID="P-CT", ImageOrientationPatient=[1, 0, 0, 0, 1, 0],
                               PixelSpacing=[0.7, 0.7], WindowCenter=40, WindowWidth=400,
                               RescaleSlope=1, RescaleIntercept=-1024)
    liver = np.zeros((64, 64), bool)
    liver[16:44, 12:50] = True
    lesion = np.zeros((64, 64), bool)
    lesion[24:30, 26:34] = True
    write_dicom_seg(root / "ct" / "seg_liver.dcm", ct_uid, liver, "liver", "Anatomical Structure")
    write_dicom_seg(root / "ct" / "seg_lesion.dcm", ct_uid, lesion, "lesion", "Morphologically Altered Structure")
    mr = rng.integers(0, 1000, (3, 48, 40)).astype(np.uint16)
    ds_path = root / "mr" / "cine.dcm"
    write_dicom_image(ds_path, mr, sop_class=MR_IMAGE, Modality="MR", BodyPartExamined="KNEE", PatientID="P-MR",
                      ImageOrientationPatient=[0, 1, 0, 0, 0, -1], PixelSpacing=[0.5, 0.5])
    import pydicom
    from pydicom.pixels import pack_bits

    ds = pydicom.dcmread(ds_path)
    ov = np.zeros((48, 40), np.uint8)
    ov[10, 10:20] = ov[20, 10:20] = 1
    ov[10:21, 10] = ov[10:21, 19] = 1  # a square outline
    ds.add_new(0x60000010, "US", 48)
    ds.add_new(0x60000011, "US", 40)
    ds.add_new(0x60000040, "CS", "G")
    ds.add_new(0x60000050, "SS", [1, 1])
    ds.add_new(0x60000100, "US", 1)
    ds.add_new(0x60000102, "US", 0)
    ds.add_new(0x60001500, "LO", "meniscal tear")
    ds.add_new(0x60003000, "OW", pack_bits(ov.ravel()))
    ds.save_as(ds_path, enforce_file_format=True)
    cr = np.tile(np.linspace(0, 4000, 50, dtype=np.uint16), (60, 1))
    write_dicom_image(root / "cr" / "chest.dcm", cr, sop_class=CR_IMAGE, Modality="CR", BodyPartExamined="CHEST",
                      PatientID="P-CR", ViewPosition="PA", ImagerPixelSpacing=[0.2, 0.2],
                      PhotometricInterpretation="MONOCHROME1")
    (root / "broken.dcm").write_bytes(b"\0" * 128 + b"DICM" + b"\x02\x00garbage")
    return {"ct": ct_uid}


# --- NIfTI ---------------------------------------------------------------------------------------


def make_nifti_folder(root: Path) -> None:
    import nibabel as nib

    root.mkdir(parents=True, exist_ok=True)
    vol = np.zeros((32, 28, 24), np.float32)
    zz, yy, xx = np.meshgrid(np.arange(32), np.arange(28), np.arange(24), indexing="ij")
    vol += 100 + zz  # x-gradient in RAS
    lab = np.zeros(vol.shape, np.int16)
    lab[4:14, 6:22, 6:18] = 1   # on the patient's left? no: small x = patient's LEFT in RAS+ (x grows to the right)
    lab[18:28, 6:22, 6:18] = 2
    lab[20:24, 10:14, 10:13] = 3
    vol[(lab == 1) | (lab == 2)] += 60  # the hemispheres drawn on the background (their outlines shown; issue 40)
    vol[lab == 3] += 200
    aff = np.diag([1.0, 1.2, 2.0, 1.0])
    nib.save(nib.Nifti1Image(vol, aff), root / "brain.nii.gz")
    (root / "labels").mkdir(exist_ok=True)
    nib.save(nib.Nifti1Image(lab, aff), root / "labels" / "brain.nii.gz")
    (root / "lut.txt").write_text("# value name R G B A\n0 Unknown 0 0 0 0\n1 Left-Hemisphere 10 10 10 0\n"
                                  "2 Right-Hemisphere 20 20 20 0\n3 Tumour 255 0 0 0\n")
    (root / "medr2.json").write_text(json.dumps({
        "source": "toy-mri", "license": "CC0", "defaults": {"modality": "MRI", "body_region": "head"},
        "lut": "lut.txt", "findings": ["Tumour"], "slices_per_plane": 2, "min_area_px": 4}))
