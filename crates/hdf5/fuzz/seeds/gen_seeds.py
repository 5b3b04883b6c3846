"""Writes the small hand-made seeds of the HDF5 fuzz targets (links/, raw_walk/), a few KiB each.

Run with a Python that has h5py and hdf5plugin (e.g. the project's py venv):
    python gen_seeds.py        # from crates/hdf5/fuzz/seeds
The other seeds are small fixtures copied as they are (listed in ../README.md).
"""
import os

import h5py
import hdf5plugin
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def path(target, name):
    os.makedirs(os.path.join(HERE, target), exist_ok=True)
    return os.path.join(HERE, target, name)


def links_seeds():
    # Old-style groups (superblock v0, symbol tables): hard and soft links (no external links there).
    with h5py.File(path("links", "symbol_table_v0.h5"), "w", libver="earliest") as f:
        g = f.create_group("entry/data")
        g.create_dataset("data", data=np.arange(6, dtype=np.uint16).reshape(2, 3))
        f["entry/alias"] = h5py.SoftLink("/entry/data")
        f["entry/dangling"] = h5py.SoftLink("/nowhere")
        f["loop"] = h5py.SoftLink("/loop")
    # Compact new-style groups: hard, soft and external links (a Dectris master's shape).
    with h5py.File(path("links", "compact_latest.h5"), "w", libver="latest") as f:
        g = f.create_group("entry/data")
        g["data_000001"] = h5py.ExternalLink("external.h5", "/entry/data/data")
        g["data_000002"] = h5py.ExternalLink("missing_data_000002.h5", "/entry/data/data")
        f.create_dataset("entry/data/data", data=np.zeros((2, 4, 4), dtype=np.uint32), chunks=(1, 4, 4))
        f["entry/soft"] = h5py.SoftLink("/entry/data")
    # Dense groups (more than 8 links: fractal heap + v2 B-tree name index), links of every kind.
    with h5py.File(path("links", "dense_latest.h5"), "w", libver="latest") as f:
        g = f.create_group("entry/data")
        for k in range(1, 13):
            g[f"data_{k:06d}"] = h5py.ExternalLink(f"x_data_{k:06d}.h5", "/entry/data/data")
        g["soft"] = h5py.SoftLink("/entry")
        g.create_group("sub").attrs["n"] = 3
    # Dense groups with creation order tracked (a second index).
    with h5py.File(path("links", "dense_ordered.h5"), "w", libver="latest", track_order=True) as f:
        g = f.create_group("g", track_order=True)
        for k in range(10):
            g.create_group(f"m{k}")
        g["up"] = h5py.SoftLink("/g")


def raw_walk_seeds():
    a = (np.arange(4 * 8 * 8) % 251).astype(np.uint16).reshape(4, 8, 8)
    # Every chunk index: B-tree v1 (earliest), single chunk, implicit, fixed array, extensible
    # array, B-tree v2 (latest); contiguous and compact layouts; filters.
    with h5py.File(path("raw_walk", "indexes_v1.h5"), "w", libver="earliest") as f:
        f.create_dataset("btree_v1", data=a, chunks=(1, 8, 8))
        f.create_dataset("contiguous", data=a)
        f.create_dataset("gzip_shuffle", data=a, chunks=(2, 4, 8), compression="gzip", shuffle=True)
    with h5py.File(path("raw_walk", "indexes_latest.h5"), "w", libver="latest") as f:
        f.create_dataset("single", data=a, chunks=(4, 8, 8))
        f.create_dataset("fixed", data=a, chunks=(1, 8, 8))
        f.create_dataset("extensible", data=a, chunks=(1, 8, 8), maxshape=(None, 8, 8))
        f.create_dataset("btree_v2", data=a, chunks=(1, 4, 8), maxshape=(None, None, 8))
        f.create_dataset("partial", shape=(5, 8, 8), dtype="u2", chunks=(2, 8, 8), maxshape=(9, 8, 8))[:2] = a[:2]
        sid = h5py.h5s.create_simple((4, 8, 8))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((2, 8, 8))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        h5py.h5d.create(f.id, b"implicit", h5py.h5t.STD_U16LE, sid, dcpl=dcpl).write(h5py.h5s.ALL, h5py.h5s.ALL, a)
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_layout(h5py.h5d.COMPACT)
        b = np.arange(8, dtype=np.float32)
        h5py.h5d.create(f.id, b"compact", h5py.h5t.IEEE_F32LE, h5py.h5s.create_simple((8,)), dcpl=dcpl).write(h5py.h5s.ALL, h5py.h5s.ALL, b)
    with h5py.File(path("raw_walk", "filters.h5"), "w", libver="latest") as f:
        f.create_dataset("bslz4", data=a, chunks=(1, 8, 8), **hdf5plugin.Bitshuffle(cname="lz4"))
        f.create_dataset("lz4", data=a, chunks=(1, 8, 8), **hdf5plugin.LZ4())
        f.create_dataset("f64", data=a.astype(np.float64), chunks=(2, 8, 8), compression="gzip")
        f.create_dataset("i32_be", data=a.astype(">i4"), chunks=(4, 4, 4), fletcher32=True)


if __name__ == "__main__":
    links_seeds()
    raw_walk_seeds()


def filter_seeds():
    """bslz4/, h5lz4/, lz4_block/: a selector byte, then a chunk (or an LZ4 block) as stored."""
    import struct

    rng = np.random.default_rng(7)
    frames = {
        "ramp": (np.arange(256) % 251).astype(np.uint16).reshape(16, 16),
        "sparse": (rng.random((16, 16)) < 0.1).astype(np.uint32) * rng.integers(1, 9, (16, 16)).astype(np.uint32),
        "bytes": rng.integers(0, 256, 300).astype(np.uint8),
    }
    scratch = os.path.join(HERE, "_filters.h5")
    with h5py.File(scratch, "w") as f:
        for name, a in frames.items():
            f.create_dataset("bs_" + name, data=a, chunks=a.shape, **hdf5plugin.Bitshuffle(cname="lz4"))
            f.create_dataset("lz_" + name, data=a, chunks=a.shape, **hdf5plugin.LZ4(nbytes=64))
        raw = {k: f[k].id.read_direct_chunk((0,) * f[k].ndim)[1] for k in f}
    os.remove(scratch)
    for name, a in frames.items():
        es = a.dtype.itemsize
        sel = {1: 0, 2: 1, 4: 2, 8: 3}[es]
        open(path("bslz4", f"{name}.bin"), "wb").write(bytes([sel]) + raw["bs_" + name])
        open(path("h5lz4", f"{name}.bin"), "wb").write(bytes([0]) + raw["lz_" + name])
        # The first LZ4 block of the HDF5-LZ4 chunk: 8-byte size, 4-byte block size, 4-byte length.
        c = raw["lz_" + name]
        n = struct.unpack(">I", c[12:16])[0]
        out = min(64, a.nbytes)
        open(path("lz4_block", f"{name}.bin"), "wb").write(bytes([out]) + c[16 : 16 + n])
    open(path("lz4_block", "empty.bin"), "wb").write(bytes([0]))
    # A literal run, then a long match at offset 1 (the bit planes' shape): 4 literals + 200 copies.
    open(path("lz4_block", "offset1.bin"), "wb").write(bytes([0x80 | 4]) + bytes([0x4F, 1, 2, 3, 4, 1, 0, 200 - 19, 0x10, 9]))


if __name__ == "__main__":
    filter_seeds()
