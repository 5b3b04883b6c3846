"""4D-STEM reductions split over frame ranges.

Each range is read, decoded (bitshuffle+LZ4) and reduced in Rust by the fused pass of
``scatterlab stem reduce`` (bad pixels zeroed as the CLI does), with the GIL released. The partial
products are plain dicts of NumPy arrays (picklable: Dask moves them between processes).
:func:`merge` combines them exactly -- integer sums add, max patterns take the maximum,
per-position values are placed -- and computes CoM, DPC, iDPC with the CLI's code, so any split
gives the CLI's products.

Geometry: ``center`` = (row, col), ``bf`` = BF radius, ``adf`` = (inner, outer), all in detector
pixels; ``adf`` defaults to ``(1.2 bf, 2.5 bf)``. Without ``center`` or ``bf`` the probe is
measured from the mean pattern (:func:`probe`), as the CLI does.
"""

from __future__ import annotations

import os
from typing import Iterable, Sequence

import numpy as np

from . import _native

__all__ = ["info", "reduce_range", "reduce_frames", "merge", "merge_partials", "probe", "reduce", "split"]


def info(master: str | os.PathLike) -> dict:
    """Frames, detector and scan shape, pixel type, data files ``(file, first, count, present)``
    and missing files of the acquisition ``master``."""
    return _native.info(os.fspath(master))


def reduce_range(master: str | os.PathLike, first: int, count: int, *, center=None, bf=None, adf=None) -> dict:
    """Partial products of frames ``[first, first + count)`` of ``master``.

    With ``center`` and ``bf`` the standard detectors (bf, abf, adf, df) are summed; without
    either, only the patterns, totals and centre of mass (what :func:`probe` needs).
    A range outside the acquisition or a missing data file raises naming it.
    """
    center = None if center is None else _pair(center, "center")
    adf = None if adf is None else _pair(adf, "adf")
    bf = None if bf is None else _real(bf, "bf")
    return _native.reduce_range(os.fspath(master), _index(first, "first"), _index(count, "count"), center, bf, adf)


def reduce_frames(master: str | os.PathLike, first: int, frames, *, center=None, bf=None, adf=None) -> dict:
    """Partial products of in-memory ``frames`` (``ndarray[n, det_rows, det_cols]`` of uint8,
    uint16 or uint32, raw counts), taken as frames ``[first, first + n)`` of ``master``: what
    :func:`reduce_range` gives for those frames (the pixel mask of ``master`` applied), for
    engines that read the data themselves (:class:`scatterlab.libertem.FusedUDF`)."""
    center = None if center is None else _pair(center, "center")
    adf = None if adf is None else _pair(adf, "adf")
    bf = None if bf is None else _real(bf, "bf")
    return _native.reduce_frames(os.fspath(master), _index(first, "first"), frames, center, bf, adf)


def merge_partials(parts: Iterable[dict]) -> dict:
    """Partial products covering every frame once, merged into one partial from frame 0."""
    return _native.merge(list(parts))


def probe(parts: Iterable[dict]) -> tuple[tuple[float, float], float]:
    """``((row, col), radius)`` of the bright-field disc of the merged mean pattern."""
    return _native.probe(list(parts))


def merge(parts: Iterable[dict]) -> dict[str, np.ndarray]:
    """Every product of ``scatterlab stem reduce`` from partial products (reduced with detectors)
    covering every frame once, keyed like its ``.npy`` files (``sum_dp``, ``max_dp``, ``total``,
    ``bf``, ``abf``, ``adf``, ``df``, ``mean_dp``, ``com_row_raw``, ``com_col_raw``, ``com_row``,
    ``com_col``, ``dpc_row_aligned``, ``dpc_col_aligned``, ``idpc``)."""
    return _native.products(list(parts))


def split(n_frames: int, partitions: int | Sequence[tuple[int, int]] | None, default: int = 1) -> list[tuple[int, int]]:
    """``(first, count)`` ranges: ``partitions`` given as ranges is returned as is; a number
    splits ``0..n_frames`` into that many near-equal ranges (``None``: ``default``)."""
    if partitions is None:
        partitions = default
    if isinstance(partitions, (int, np.integer)) and not isinstance(partitions, bool):
        k = max(1, min(int(partitions), n_frames))
        edges = [n_frames * i // k for i in range(k + 1)]
        return [(a, b - a) for a, b in zip(edges, edges[1:])]
    return [(_index(a, "partition first"), _index(n, "partition count")) for a, n in partitions]


def reduce(master: str | os.PathLike, *, center=None, bf=None, adf=None, partitions=None) -> dict[str, np.ndarray]:
    """The whole reduction in this process (ranges one after another): the reference that the
    Dask front end equals."""
    n = info(master)["n_frames"]
    ranges = split(n, partitions)
    if center is None or bf is None:
        c, r = probe(reduce_range(master, a, k) for a, k in ranges)
        center, bf = (c if center is None else center), (r if bf is None else bf)
    return merge(reduce_range(master, a, k, center=center, bf=bf, adf=adf) for a, k in ranges)


def _index(v, what: str) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
        raise TypeError(f"{what} must be an integer (got {type(v).__name__})")
    if v < 0:
        raise ValueError(f"{what} must not be negative (got {v})")
    return int(v)


def _real(v, what: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)):
        raise TypeError(f"{what} must be a number (got {type(v).__name__})")
    return float(v)


def _pair(v, what: str) -> tuple[float, float]:
    try:
        a, b = v
    except (TypeError, ValueError):
        raise TypeError(f"{what} must be a pair of numbers (got {v!r})") from None
    return _real(a, what), _real(b, what)
