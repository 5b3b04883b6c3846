"""The 4D-STEM reduction on Dask.distributed with plain futures: frame ranges are reduced on the
workers (:func:`scatterlab.stem.reduce_range`, GIL released), the partial products gathered and
merged on the client (:func:`scatterlab.stem.merge`). Any split gives the CLI's products.
"""

from __future__ import annotations

import os

import numpy as np

from . import stem

__all__ = ["reduce"]


def reduce(master: str | os.PathLike, client, *, center=None, bf=None, adf=None, partitions=None) -> dict[str, np.ndarray]:
    """Every product of ``scatterlab stem reduce`` for ``master``, reduced on ``client``'s workers.

    ``center`` = (row, col), ``bf`` = radius, ``adf`` = (inner, outer) in pixels, defaults as the
    CLI's (without ``center`` or ``bf`` a first pass measures the probe). ``partitions``: a number
    of near-equal frame ranges (default: 2 per worker thread) or ``(first, count)`` ranges
    covering every frame once. The master path must be readable by every worker.
    """
    master = os.path.abspath(os.fspath(master))
    meta = stem.info(master)
    if meta["missing"]:
        raise FileNotFoundError(f"{master}: data files missing: {', '.join(meta['missing'])}")
    threads = sum(client.nthreads().values())
    ranges = stem.split(meta["n_frames"], partitions, default=2 * max(threads, 1))

    def run(**geometry):
        futures = [client.submit(stem.reduce_range, master, first, count, pure=False, **geometry) for first, count in ranges]
        return client.gather(futures)

    if center is None or bf is None:
        c, r = stem.probe(run())
        center, bf = (c if center is None else center), (r if bf is None else bf)
    return stem.merge(run(center=center, bf=bf, adf=adf))
