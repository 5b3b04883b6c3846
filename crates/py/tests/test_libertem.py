"""The fused pass over in-memory frames (`scatterlab.stem.reduce_frames`, what LiberTEM's
partitions go through) equals the pass that reads the files (`reduce_range`), and the LiberTEM
UDF `scatterlab.libertem.FusedUDF` gives the products of `scatterlab.dask.reduce`.

Frames are read with h5py + hdf5plugin (LiberTEM's dependencies; skipped without them), raw: the
u32 variant keeps its 0xFFFFFFFF bad pixels, which the reduction must zero from the master's mask.
"""

import numpy as np
import pytest

import scatterlab.dask
import scatterlab.stem as stem
from conftest import stem_dir
from test_dask_stem import assert_products_equal

h5py = pytest.importorskip("h5py")
pytest.importorskip("hdf5plugin")


def raw_frames(name: str) -> np.ndarray:
    with h5py.File(stem_dir() / f"{name}_master.h5", "r") as f:
        keys = sorted(k for k in f["entry/data"] if k.startswith("data_"))
        return np.concatenate([f["entry/data"][k][()] for k in keys])


def geometry(master) -> tuple:
    n = stem.info(master)["n_frames"]
    return stem.probe([stem.reduce_range(master, 0, n)])


@pytest.mark.parametrize("name,ranges", [("dev_small_u32", [(0, 37), (37, 113), (150, 106)]), ("dev_oddtail", [(0, 3), (3, 17)])])
def test_reduce_frames_equals_reduce_range(name, ranges):
    master = stem_dir() / f"{name}_master.h5"
    frames = raw_frames(name)
    info = stem.info(master)
    assert frames.shape == (info["n_frames"], *info["det"]) and frames.dtype == np.dtype(info["dtype"].replace("u", "uint"))
    center, bf = geometry(master)
    for a, n in ranges:
        got = stem.reduce_frames(master, a, frames[a : a + n], center=center, bf=bf)
        want = stem.reduce_range(master, a, n, center=center, bf=bf)
        assert got.keys() == want.keys()
        for k in ("first", "count", "n_masked", "det", "geometry", "frames_done"):
            assert got[k] == want[k], f"{name} {a}..+{n}: {k}"
        for k in ("sum_dp", "max_dp", "total", "com_row_raw", "com_col_raw"):
            assert np.array_equal(got[k], want[k]), f"{name} {a}..+{n}: {k}"
        for (gn, gp, gv), (wn, wp, wv) in zip(got["detectors"], want["detectors"]):
            assert (gn, gp) == (wn, wp) and np.array_equal(gv, wv), f"{name} {a}..+{n}: {gn}"
    if name == "dev_small_u32":
        assert got["n_masked"] > 0 and (frames == 0xFFFFFFFF).any(), "the u32 variant has raw bad pixels to zero"
    parts = [stem.reduce_frames(master, a, frames[a : a + n], center=center, bf=bf) for a, n in ranges]
    assert_products_equal(stem.merge(parts), stem.reduce(master, center=center, bf=bf), name)


def test_reduce_frames_rejects_bad_input():
    master = stem_dir() / "dev_oddtail_master.h5"
    frames = raw_frames("dev_oddtail")
    with pytest.raises(TypeError, match="uint8, uint16 or uint32"):
        stem.reduce_frames(master, 0, frames.astype(np.float32))
    with pytest.raises(ValueError, match="do not match the 61×67 detector"):
        stem.reduce_frames(master, 0, frames[:, :60])
    with pytest.raises(ValueError, match="must be 3-D"):
        stem.reduce_frames(master, 0, frames[0])
    with pytest.raises(ValueError, match="inside the 20 frames"):
        stem.reduce_frames(master, 15, frames[:6])


def test_fused_udf_equals_dask_reduce(client):
    pytest.importorskip("libertem")
    from libertem.api import Context

    import scatterlab.libertem as sl

    master = stem_dir() / "dev_medium_master.h5"
    frames = raw_frames("dev_medium")
    center, bf = geometry(master)
    ctx = Context.make_with("inline")
    ds = ctx.load("memory", data=frames.reshape(128, 128, 96, 96), sig_dims=2, num_partitions=5)
    result = ctx.run_udf(dataset=ds, udf=sl.FusedUDF(master, center=center, bf=bf))
    parts = result["parts"].data[0]
    assert len(parts) == 5 and sum(p["count"] for p in parts) == 16384
    want = scatterlab.dask.reduce(master, client, center=center, bf=bf, partitions=3)
    assert_products_equal(sl.products(result), want, "dev_medium FusedUDF")


def test_fused_udf_refuses_a_roi():
    pytest.importorskip("libertem")
    from libertem.api import Context

    import scatterlab.libertem as sl

    master = stem_dir() / "dev_oddtail_master.h5"
    ctx = Context.make_with("inline")
    ds = ctx.load("memory", data=raw_frames("dev_oddtail").reshape(4, 5, 61, 67), sig_dims=2)
    roi = np.zeros((4, 5), dtype=bool)
    roi[1:3] = True
    with pytest.raises(ValueError, match="region of interest"):
        ctx.run_udf(dataset=ds, udf=sl.FusedUDF(master, center=(30.4, 33.2), bf=9.0), roi=roi)
