"""The 4D-STEM reduction on Dask.distributed with plain futures: frame ranges are reduced on the
workers (:func:`scatterlab.stem.reduce_range`, GIL released), the partial products gathered and
merged on the client (:func:`scatterlab.stem.merge`). Any split gives the CLI's products.

Also: whole reflectivity fits spread over workers (:func:`fit_tasks`), and the Bloch-wave
refinement's loss and gradient with frames sharded over workers (:func:`bloch_loss_and_gradient`).
"""

from __future__ import annotations

import os

import numpy as np

from . import bloch, refl, stem

__all__ = ["reduce", "fit_tasks", "bloch_loss_and_gradient"]


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


def fit_tasks(client, task, seeds, **options) -> list[dict]:
    """Whole fits of ``task`` (JSON text, a dict or a path), one per seed, on ``client``'s
    workers: the results of :func:`scatterlab.refl.fit_task` in ``seeds`` order (each equal to
    ``scatterlab refl fit --seed s``). ``options``: ``method``, ``log``, ``steps``."""
    [text] = client.scatter([refl.task_text(task)], broadcast=True)
    futures = client.map(_fit_one, [text] * len(seeds), list(seeds), options=options, pure=False)
    return client.gather(futures)


def _fit_one(text: str, seed: int, options: dict) -> dict:
    return refl.fit_task(text, seed=seed, **options)


def bloch_loss_and_gradient(experiment, params, client, *, objective="chi2", shards=None) -> tuple[float, np.ndarray]:
    """The Bloch refinement's loss and gradient at ``params`` with the frames sharded over
    ``client``'s workers, added on the client in global frame order: the same numbers as
    :meth:`scatterlab.bloch.Refinement.loss_and_gradient` in one process. ``shards``: a number
    of contiguous frame ranges (default: one per worker thread) or lists of frame indices
    covering every frame once. ``experiment``: a path (readable by every worker) or a
    :class:`scatterlab.bloch.Refinement` (its path and objective are used)."""
    ref = experiment if isinstance(experiment, bloch.Refinement) else bloch.Refinement(experiment, objective=objective)
    params = np.ascontiguousarray(params, dtype=np.float64)
    n = ref.frame_count
    if shards is None or isinstance(shards, (int, np.integer)):
        k = max(1, min(int(shards or sum(client.nthreads().values()) or 1), n))
        shards = [list(range(n * i // k, n * (i + 1) // k)) for i in range(k)]
    futures = [client.submit(bloch.shard_terms, ref.path, ref.objective, params, list(s), pure=False) for s in shards]
    return bloch.sum_terms(client.gather(futures), n, len(ref.names))
