"""Writes chunk_indexes_v1.h5, chunk_indexes_latest.h5 and chunk_indexes.json (tests/chunk_index.rs).

Every HDF5 chunk index type with the cases the streaming walk must get right: partial edge
chunks, unwritten chunks, uninitialized fixed-array pages, a fixed array across the 16,384-cell
slab boundary, filtered entries, a non-zero filter mask, extensible arrays with the unlimited
dimension first and second, a shrunk extensible array, B-tree v2, implicit and single-chunk
indexes. The JSON holds libhdf5's own view of each chunk (`get_chunk_info_by_coord`), the oracle the
tests compare our dense table with.

Needs h5py (3.16 with HDF5 2.0.0 was used); run from anywhere:
    python gen_chunk_indexes.py
"""

import json
import os

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)


def fill(d, *regions):
    """Writes random values into each region (a tuple of slices) of dataset d."""
    for r in regions:
        shape = tuple(len(range(*s.indices(n))) for s, n in zip(r, d.shape))
        d[r] = rng.integers(0, 200, size=shape).astype(d.dtype)


WRONG_INFO = set()  # datasets where libhdf5's chunk info disagrees with the chunk's bytes


def locate(d, raw, offset):
    """[address, size, mask] of the chunk at element `offset` of d, or None if unallocated.

    libhdf5's chunk-info lookup agrees with the chunk's bytes (`read_direct_chunk`, the path
    reads take) except for an extensible array whose unlimited dimension is not the first, where
    `get_chunk_info_by_coord` and `get_chunk_info(i)` report wrong addresses or none (HDF5 2.0.0).
    There the chunk's bytes, random and unique in the file, are searched for.
    """
    try:
        mask, data = d.id.read_direct_chunk(offset)
    except RuntimeError:
        data = None
    ci = d.id.get_chunk_info_by_coord(offset)
    if data is None or (ci.byte_offset is not None and raw[ci.byte_offset:ci.byte_offset + ci.size] == data):
        if data is None and ci.byte_offset is not None or data is not None and mask != ci.filter_mask:
            WRONG_INFO.add(d.name)
        return None if data is None else [ci.byte_offset, ci.size, ci.filter_mask]
    WRONG_INFO.add(d.name)
    at = raw.find(data)
    assert at >= 0 and raw.find(data, at + 1) < 0, (d.name, offset, "chunk bytes not unique")
    return [at, len(data), mask]


def table(d, index, raw):
    """Every stored chunk of d: [linear index in the current chunk grid, address, size, mask]."""
    grid = [-(-n // c) for n, c in zip(d.shape, d.chunks)]
    stored = []
    for idx, cell in enumerate(np.ndindex(*grid)):
        loc = locate(d, raw, tuple(int(i) * c for i, c in zip(cell, d.chunks)))
        if loc is not None:
            stored.append([idx] + loc)
    assert len(stored) == d.id.get_num_chunks(), d.name
    return {"path": d.name, "shape": list(d.shape), "chunks": list(d.chunks), "index": index, "stored": stored}


files = {}  # file name -> {dataset path: expected index type}

with h5py.File(os.path.join(HERE, "chunk_indexes_v1.h5"), "w", libver="earliest") as f:
    kinds = files["chunk_indexes_v1.h5"] = {}
    d = f.create_dataset("gzip_2d", shape=(30, 40), chunks=(4, 7), dtype="u2", compression="gzip")
    fill(d, (slice(0, 20), slice(0, 40)), (slice(24, 30), slice(35, 40)))
    # A chunk stored with its first filter skipped (mask bit 0): raw bytes, as libhdf5 allows.
    d.id.write_direct_chunk((20, 7), rng.integers(0, 200, size=(4, 7)).astype("u2").tobytes(), filter_mask=1)
    kinds[d.name] = "b_tree_v1"
    d = f.create_dataset("plain_3d", shape=(9, 5, 6), chunks=(2, 5, 4), dtype="u1")
    fill(d, (slice(0, 9), slice(0, 5), slice(0, 3)), (slice(8, 9), slice(0, 5), slice(4, 6)))
    kinds[d.name] = "b_tree_v1"
    d = f.create_dataset("shrunk", shape=(100,), maxshape=(None,), chunks=(4,), dtype="u1", compression="gzip")
    fill(d, (slice(0, 100),))
    d.resize((50,))
    kinds[d.name] = "b_tree_v1"

with h5py.File(os.path.join(HERE, "chunk_indexes_latest.h5"), "w", libver=("v110", "v110")) as f:
    kinds = files["chunk_indexes_latest.h5"] = {}
    d = f.create_dataset("fa_paged", shape=(17000,), chunks=(1,), dtype="u1")
    # Pages of 1024 entries: pages 1, 4–14 never written (uninitialized); the run at 16,300
    # crosses the first 16,384-cell slab.
    fill(d, (slice(0, 300),), (slice(3000, 3100),), (slice(16300, 16500),), (slice(16990, 17000),))
    kinds[d.name] = "fixed_array"
    d = f.create_dataset("fa_gzip_2d", shape=(30, 40), chunks=(4, 7), dtype="u2", compression="gzip")
    fill(d, (slice(0, 20), slice(0, 40)), (slice(24, 30), slice(35, 40)))
    d.id.write_direct_chunk((20, 7), rng.integers(0, 200, size=(4, 7)).astype("u2").tobytes(), filter_mask=1)
    kinds[d.name] = "fixed_array"
    # A fixed maximum above the current size in a dimension after the first: libhdf5 numbers the
    # fixed array's entries over the chunk grid at the maximum dimensions.
    d = f.create_dataset("fa_max_wider", shape=(6, 10, 5), maxshape=(9, 20, 5), chunks=(1, 3, 5), dtype="u2", compression="gzip")
    fill(d, (slice(0, 6), slice(0, 10), slice(0, 5)))
    kinds[d.name] = "fixed_array"
    d = f.create_dataset("ea_first", shape=(300, 10), maxshape=(None, 10), chunks=(2, 4), dtype="u2", compression="gzip")
    fill(d, (slice(0, 120), slice(0, 10)), (slice(150, 300), slice(0, 4)))
    kinds[d.name] = "extensible_array"
    d = f.create_dataset("ea_second", shape=(6, 50), maxshape=(6, None), chunks=(2, 3), dtype="u1")
    fill(d, (slice(0, 6), slice(0, 30)), (slice(4, 6), slice(40, 50)))
    kinds[d.name] = "extensible_array"
    d = f.create_dataset("ea_shrunk", shape=(100,), maxshape=(None,), chunks=(4,), dtype="u1", compression="gzip")
    fill(d, (slice(0, 100),))
    d.resize((50,))
    kinds[d.name] = "extensible_array"
    d = f.create_dataset("bt2", shape=(20, 30), maxshape=(None, None), chunks=(3, 4), dtype="u2", compression="gzip")
    fill(d, (slice(0, 12), slice(0, 30)), (slice(18, 20), slice(20, 30)))
    kinds[d.name] = "b_tree_v2"
    # Implicit index: unfiltered, fixed size, space allocated when the dataset is created.
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_chunk((4, 3))
    dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
    space = h5py.h5s.create_simple((40, 9))
    dsid = h5py.h5d.create(f.id, b"implicit", h5py.h5t.NATIVE_UINT16, space, dcpl=dcpl)
    d = h5py.Dataset(dsid)
    fill(d, (slice(0, 40), slice(0, 9)))
    kinds[d.name] = "implicit"
    space = h5py.h5s.create_simple((5, 8), (7, 14))
    dsid = h5py.h5d.create(f.id, b"implicit_max_wider", h5py.h5t.NATIVE_UINT16, space, dcpl=dcpl)
    d = h5py.Dataset(dsid)
    fill(d, (slice(0, 5), slice(0, 8)))
    kinds[d.name] = "implicit"
    d = f.create_dataset("single_gzip", shape=(10, 10), chunks=(10, 10), dtype="u2", compression="gzip")
    fill(d, (slice(0, 10), slice(0, 10)))
    kinds[d.name] = "single_chunk"

out = {}
for name, kinds in files.items():
    path = os.path.join(HERE, name)
    raw = open(path, "rb").read()
    with h5py.File(path, "r") as f:
        out[name] = [table(f[p], k, raw) for p, k in kinds.items()]

with open(os.path.join(HERE, "chunk_indexes.json"), "w") as fh:
    fh.write("{\n")
    for k, (name, rows) in enumerate(out.items()):
        fh.write(f' "{name}": [\n')
        fh.write(",\n".join("  " + json.dumps(r, separators=(",", ":")) for r in rows))
        fh.write("\n ]" + (",\n" if k + 1 < len(out) else "\n"))
    fh.write("}\n")
assert WRONG_INFO == {"/ea_second"}, WRONG_INFO
for name, rows in out.items():
    print(name, os.path.getsize(os.path.join(HERE, name)), [(r["path"], len(r["stored"])) for r in rows])
