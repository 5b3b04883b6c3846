"""The 4D-STEM reduction on Dask.distributed equals `scatterlab stem reduce`.

Two worker processes (one thread each) reduce uneven frame ranges that cross the data-file
boundaries; every integer product equals the CLI's `.npy` exactly, the centre of mass to 1e-12
(the other reals to 1e-12 relative), and both workers did work. Bad input raises a Python
exception naming the problem, and the workers survive it.
"""

import os
import shutil

import numpy as np
import pytest
from distributed import get_task_stream

import scatterlab.dask
import scatterlab.stem as stem
from conftest import stem_dir

# (fixture, frame ranges): data files hold dev_medium 5000 × 3 + 1384, dev_oddtail 8 + 8 + 4,
# dev_small_u32 100 + 100 + 56 frames; each split crosses every file boundary unevenly.
CASES = [
    ("dev_medium", [(0, 3001), (3001, 4000), (7001, 5000), (12001, 2222), (14223, 2161)]),
    ("dev_oddtail", [(0, 3), (3, 8), (11, 8), (19, 1)]),
    ("dev_small_u32", [(0, 37), (37, 113), (150, 1), (151, 79), (230, 26)]),
]
INTEGER = {"sum_dp", "max_dp", "total", "bf", "abf", "adf", "df"}
COM = {"com_row_raw", "com_col_raw", "com_row", "com_col"}


def assert_products_equal(got: dict, want: dict, label: str):
    assert set(got) == set(want), f"{label}: keys {sorted(set(got) ^ set(want))} differ"
    for name, w in want.items():
        g = got[name]
        assert g.shape == w.shape, f"{label}: {name} shape {g.shape} vs {w.shape}"
        if name in INTEGER:
            assert g.dtype == np.uint64 and np.array_equal(g, w), f"{label}: {name} differs"
        elif name in COM:
            np.testing.assert_allclose(g, w, rtol=0, atol=1e-12, equal_nan=True, err_msg=f"{label}: {name}")
        else:
            np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12, equal_nan=True, err_msg=f"{label}: {name}")


@pytest.mark.parametrize("name,ranges", CASES, ids=[c[0] for c in CASES])
def test_dask_equals_cli(client, cli_reduce, name, ranges):
    master = stem_dir() / f"{name}_master.h5"
    assert sum(n for _, n in ranges) == stem.info(master)["n_frames"]
    with get_task_stream(client) as ts:
        got = scatterlab.dask.reduce(master, client, partitions=ranges)
    workers = {t["worker"] for t in ts.data}
    print(f"{name}: {len(ts.data)} tasks on {len(workers)} workers")
    assert len(workers) == 2, f"{name}: only {workers} did work"
    assert_products_equal(got, cli_reduce(name), name)


def test_default_partitions_and_a_count(client, cli_reduce):
    master = stem_dir() / "dev_small_master.h5"
    for partitions in (None, 7):
        assert_products_equal(scatterlab.dask.reduce(master, client, partitions=partitions), cli_reduce("dev_small"), f"dev_small {partitions}")


def test_given_geometry_in_one_process_equals_cli(cli_reduce):
    master = stem_dir() / "dev_oddtail_master.h5"
    got = stem.reduce(master, center=(30.5, 33.0), bf=8.5, adf=(10.0, 22.5), partitions=[(0, 9), (9, 11)])
    assert_products_equal(got, cli_reduce("dev_oddtail", "--center", "30.5,33", "--bf", "8.5", "--adf", "10,22.5"), "oddtail given geometry")


def test_bad_input_is_named(client, tmp_path):
    master = stem_dir() / "dev_oddtail_master.h5"
    with pytest.raises(TypeError, match="first must be an integer"):
        stem.reduce_range(master, "0", 5)
    with pytest.raises(TypeError, match="center must be a pair"):
        stem.reduce_range(master, 0, 5, center=3.0, bf=2.0)
    with pytest.raises(ValueError, match=r"frames 15\.\.25.*20 frames of dev_oddtail_master\.h5"):
        stem.reduce_range(master, 15, 10)
    with pytest.raises(FileNotFoundError, match="no such master file"):
        stem.reduce_range(tmp_path / "none_master.h5", 0, 1)
    # Wrong dtype in partial products handed to merge.
    part = stem.reduce_range(master, 0, 20, center=(30.0, 33.0), bf=9.0)
    bad = dict(part, sum_dp=part["sum_dp"].astype(np.float64))
    with pytest.raises(TypeError, match="'sum_dp' must be a 1-D uint64 array \\(got 1-D float64\\)"):
        stem.merge([bad])
    with pytest.raises(ValueError, match=r"frames 0\.\.10.*uncovered|leave frames"):
        stem.merge([stem.reduce_range(master, 10, 10, center=(30.0, 33.0), bf=9.0)])
    # A missing data file: named on the client and through a worker; the workers live on.
    for f in ["dev_oddtail_master.h5", "dev_oddtail_data_000001.h5", "dev_oddtail_data_000003.h5"]:
        shutil.copy(stem_dir() / f, tmp_path / f)
    partial = tmp_path / "dev_oddtail_master.h5"
    assert stem.reduce_range(partial, 0, 8)["count"] == 8
    with pytest.raises(FileNotFoundError, match="dev_oddtail_data_000002.h5"):
        stem.reduce_range(partial, 5, 7)
    with pytest.raises(FileNotFoundError, match="dev_oddtail_data_000002.h5"):
        scatterlab.dask.reduce(partial, client)
    with pytest.raises(FileNotFoundError, match="dev_oddtail_data_000002.h5"):
        client.submit(stem.reduce_range, str(partial), 5, 7, pure=False).result()
    pids = client.run(os.getpid)
    assert len(pids) == 2, f"workers after the errors: {pids}"
    assert client.submit(stem.reduce_range, str(master), 0, 20, pure=False).result()["frames_done"] == 20
