#!/usr/bin/python3
"""The fixtures' display pipeline for the app end-to-end tests, read with h5py (an HDF5 reader
independent of ours): per virtual image of `<prefix>_reference.h5`, its sum, its min/max limits
and the FNV-1a 64 digest of its colormap (LUT) indices as the fixtures README defines them —
norm = clip((v - low)/(high - low), 0, 1) in float32 with low/high = min/max, index =
min(floor(norm * 255), 255) — for `adf` the fixture's own `display_adf_lut_index`.

usage: reference_display.py <prefix>_reference.h5   (prints JSON)
"""
import json
import sys

import h5py
import numpy as np


def fnv1a64(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def lut(values: np.ndarray) -> np.ndarray:
    v = values.astype(np.float32)
    low, high = np.float32(v.min()), np.float32(v.max())
    norm = np.clip((v - low) / (high - low), np.float32(0), np.float32(1)).astype(np.float32)
    return np.minimum(np.floor(norm * np.float32(255)), 255).astype(np.uint8)


def main() -> None:
    out = {}
    with h5py.File(sys.argv[1], "r") as f:
        for name in ("bf", "abf", "adf", "df"):
            v = f[name][()]
            indices = f["display_adf_lut_index"][()] if name == "adf" else lut(v)
            out[name] = {
                "sum": int(v.sum(dtype=np.uint64)),
                "limits": [float(v.min()), float(v.max())],
                "lutFnv1a64": fnv1a64(np.ascontiguousarray(indices, dtype=np.uint8).tobytes()),
            }
        # The fixture's own indices agree with the definition above (else the test would be moot).
        out["adfDefinitionAgrees"] = bool((lut(f["adf"][()]) == f["display_adf_lut_index"][()]).all())
    json.dump(out, sys.stdout)


main()
