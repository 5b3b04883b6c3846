"""scatterlab's fused 4D-STEM pass as a LiberTEM UDF, for users whose data already flow through
LiberTEM (its readers, partitions and Dask cluster). LiberTEM is an optional dependency: this
module imports it on first use of :class:`FusedUDF`.

LiberTEM hands :meth:`FusedUDF.process_partition` each partition's frames in their stored dtype;
they are reduced in Rust by :func:`scatterlab.stem.reduce_frames` (the acquisition's pixel mask
zeroed as the CLI does) into the partial products that :func:`scatterlab.stem.reduce_range`
gives for the same frames. The UDF's merge collects them; :func:`products` merges them exactly
into the products of ``scatterlab stem reduce`` (equal to :func:`scatterlab.dask.reduce`'s).

    ctx = libertem.api.Context.make_with("inline")    # or a DaskJobExecutor on a cluster
    ds = ctx.load("memory", data=frames, sig_dims=2)  # or any LiberTEM dataset of the scan
    result = ctx.run_udf(dataset=ds, udf=FusedUDF(master, center=(48.4, 47.7), bf=12.2))
    out = products(result)                            # dict like scatterlab.dask.reduce's
"""

from __future__ import annotations

import os

import numpy as np

from . import stem

__all__ = ["FusedUDF", "products"]

try:  # LiberTEM is optional: without it the class exists but cannot be instantiated.
    from libertem.udf.base import UDF as _UDF
except ImportError:  # pragma: no cover - exercised when LiberTEM is absent
    _UDF = None


class _Missing:
    def __init__(self, *args, **kwargs):
        raise ImportError("scatterlab.libertem.FusedUDF needs LiberTEM: pip install libertem")


class FusedUDF(_UDF or _Missing):
    """The fused pass of ``scatterlab stem reduce`` on LiberTEM partitions.

    ``master``: the acquisition's master file (its metadata give the detector, the pixel mask
    and the geometry defaults; readable by every worker). ``center`` = (row, col), ``bf`` =
    radius, ``adf`` = (inner, outer) in pixels, as :func:`scatterlab.dask.reduce` takes them
    (``center`` and ``bf`` are required here: :func:`scatterlab.stem.probe` finds them). The
    data set must be the whole scan in frame order, without a region of interest.
    """

    def __init__(self, master, center, bf, adf=None):
        super().__init__(master=os.path.abspath(os.fspath(master)), center=stem._pair(center, "center"), bf=stem._real(bf, "bf"), adf=None if adf is None else stem._pair(adf, "adf"))

    def get_preferred_input_dtype(self):
        return self.USE_NATIVE_DTYPE

    def get_result_buffers(self):
        return {"parts": self.buffer(kind="single", dtype=object)}

    def get_task_data(self):
        # Partitions are placed by their first frame in the flat scan; a region of interest
        # would renumber the frames, so it is refused rather than merged wrongly.
        if self.meta.roi is not None:
            raise ValueError("FusedUDF reduces the whole scan: run it without a region of interest (roi)")
        return {}

    def process_partition(self, partition):
        frames = np.asarray(partition)
        frames = frames.reshape((-1,) + frames.shape[-2:])
        first = int(self.meta.slice.origin[0])
        p = self.params
        part = stem.reduce_frames(p.master, first, frames, center=p.center, bf=p.bf, adf=p.adf)
        self.results.parts[0] = [part]

    def merge(self, dest, src):
        dest.parts[0] = list(dest.parts[0] or []) + list(src.parts[0] or [])


def products(result) -> dict[str, np.ndarray]:
    """The products of ``scatterlab stem reduce`` from the result of ``ctx.run_udf`` with a
    :class:`FusedUDF` (the merged partitions, keyed like its ``.npy`` files)."""
    parts = result["parts"]
    parts = getattr(parts, "data", parts)
    return stem.merge(parts[0])
