"""``medr2.perturb.inpaint.halo_px`` over generated lesions and profiles round them: it always answers a distance
within its reach, whatever the profile (it raised IndexError where the profile levelled off only in its last
shells: sample seed 6262, 60 cases, a V4 removal)."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from scipy import ndimage

from medr2.perturb.inpaint import HALO_REACH, halo_px


@settings(max_examples=80, deadline=None)
@given(st.integers(4, 30), st.integers(-3, 3), st.floats(3.0, 20.0), st.floats(0.0, 60.0))
def test_halo_px_answers_within_its_reach(radius: int, knee_shift: int, step: float, far: float) -> None:
    n = 2 * radius + 60
    yy, xx = np.mgrid[0:n, 0:n]
    lesion = np.hypot(yy - n / 2, xx - n / 2) <= radius
    area = int(lesion.sum())
    eq_r = float(np.sqrt(area / np.pi))
    reach = int(np.ceil(HALO_REACH * eq_r)) + 3
    dt = ndimage.distance_transform_edt(~lesion)
    knee = max(1, reach - 1 + knee_shift)  # shells fall by ``step`` grey levels each up to the knee, then level off
    gray = 200.0 - step * np.minimum(np.ceil(dt), knee)
    gray[dt > reach + 2] = far  # the tissue beyond, far from the halo's level
    gray[lesion] = 250.0
    h = halo_px(gray, lesion, np.ones((n, n), bool))
    assert 0 <= h <= reach
