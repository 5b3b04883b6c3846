#!/usr/bin/env python3
"""Writes colormaps.bin: the shared colormap table of scatterlab's 4D-STEM display (CPU and WGSL
read the same bytes). Each map is 256 RGBA8 entries (alpha 255), maps in the order of NAMES
below, sampled from matplotlib at the 256 bin centres i/255 and rounded (round half to even of
255 * channel). Generated with matplotlib 3.11.2:

    ~/.cache/scatterlab/bench-venv/bin/python crates/stem/data/make_colormaps.py
"""
import pathlib

import matplotlib
import numpy as np

NAMES = ["gray", "viridis", "inferno", "magma", "plasma", "cividis", "turbo", "RdBu", "twilight", "hsv"]

out = bytearray()
for name in NAMES:
    cmap = matplotlib.colormaps[name]
    rgba = cmap(np.linspace(0.0, 1.0, 256))
    rgba8 = np.rint(rgba * 255.0).astype(np.uint8)
    rgba8[:, 3] = 255
    out += rgba8.tobytes()
path = pathlib.Path(__file__).with_name("colormaps.bin")
path.write_bytes(bytes(out))
print(f"wrote {path} ({len(out)} bytes, matplotlib {matplotlib.__version__}): {', '.join(NAMES)}")
