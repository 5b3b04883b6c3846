//! A 41 GB acquisition that exists only virtually, and the heap bound (docs/plans/hdf5-loading.md
//! §4, "Heap bound": < 32 MiB for any file size, not counting the consumer's resident data).
//!
//! A copy of `dev_small_single.h5` (contiguous `/entry/data/data` of (256, 64, 64) u16) is patched
//! so the dataset has 5,000,000 frames stored past the original end of file. A `VirtualStorage`
//! serves the patched bytes below that end, the original 256 frames first, and procedural frames
//! beyond them, so nothing near 41 GB is ever held. Then: the tree and the acquisition info show the
//! huge shape, frames at random indices (and the last) equal the synthetic values, a window of
//! frames streams, and a counting global allocator shows the peak heap of each phase.
//!
//! Chunked opening is measured on the fixtures (`chunked_open_heap_per_chunk`, warm opens): the
//! index walk writes each entry straight into the dense chunk table (16 B/chunk), so the heap
//! that grows with the chunk count is the table plus, for B-tree v1, the set of visited nodes:
//! 18.6 B/chunk at the peak and 16.0 B/chunk retained between the 100- and 1384-chunk files
//! (before: ~186 B/chunk at the peak, hdf5-reader's walkers returning a `Vec<ChunkEntry>`). The
//! rest is constant: a node or two and the metadata cache's 64 KiB blocks (≤ 90 KiB at 5000
//! chunks); fixed arrays are walked in slabs of 16,384 cells, ~1 MiB transient per slab. At 5 M
//! chunked frames that is ~76 MiB kept (the table) and ~80–88 MiB at the peak, not the 0.9 GiB
//! of before; the table itself is over the 32 MiB goal there (lazy per-window tables would fix it).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use scatterlab_core::CancelToken;
use scatterlab_hdf5::storage::{bytes, DynStorage, Storage, StorageBuffer};
use scatterlab_hdf5::tree::{NodeKind, StorageLayout};
use scatterlab_hdf5::{open_raw, tree, H5File, HashKind, TreeOptions};
use scatterlab_stem::load::{Acquisition, Hints, MapFileSet, MaskPolicy, ReadOptions, StreamOptions};

#[path = "common/heap.rs"]
mod heap;

use heap::{live, measured};

/// The plan's goal for the library's own heap (consumer buffers included here, so it is strict).
const HEAP_BOUND: usize = 32 << 20;

/// The tests of this file measure one global heap: they must not overlap.
static SERIAL: Mutex<()> = Mutex::new(());

fn fixture(name: &str) -> Vec<u8> {
    let p = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/fixtures/stem/")).join(name);
    std::fs::read(&p).unwrap_or_else(|e| panic!("fixture {} unreadable ({e}): the STEM fixtures must be at ../shared/fixtures/stem", p.display()))
}

// dev_small_single.h5, superblock v0 and object header v1 (no checksums), all u64 little-endian;
// offsets checked with Python against the fixture and again by `patched` below.
const EOF_AT: usize = 40; // superblock end-of-file address
const DIMS_AT: usize = 7360; // dataspace dims[0]; maxdims[0] at 7384
const MAXDIMS_AT: usize = 7384;
const LAYOUT_AT: usize = 7456; // layout message v3: 03 01, address u64, size u64
const ORIG_DATA: u64 = 8192;
const ORIG_FRAMES: u64 = 256;
const FRAME_BYTES: u64 = 64 * 64 * 2;
/// Frames of the virtual dataset: 5 M × 8 KiB = 41 GB.
const FRAMES: u64 = 5_000_000;

/// The synthetic value of pixel `i` of frame `f` (frames past the original 256).
fn synth(f: u64, i: u64) -> u16 {
    (f.wrapping_mul(0x9E37_79B9).wrapping_add(i.wrapping_mul(40503)) >> 5) as u16
}

/// The patched file and the virtual data behind it.
struct VirtualStorage {
    head: Vec<u8>,
    data_at: u64,
    len: u64,
}

impl Storage for VirtualStorage {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_range(&self, offset: u64, len: usize) -> hdf5_reader::error::Result<StorageBuffer> {
        let mut out = vec![0u8; len];
        for (p, b) in (offset..).zip(out.iter_mut()) {
            *b = if p < self.head.len() as u64 {
                self.head[p as usize]
            } else if p < self.data_at {
                0
            } else {
                let rel = p - self.data_at;
                let (f, at) = (rel / FRAME_BYTES, rel % FRAME_BYTES);
                if f < ORIG_FRAMES {
                    self.head[(ORIG_DATA + f * FRAME_BYTES + at) as usize]
                } else {
                    synth(f, at / 2).to_le_bytes()[(at % 2) as usize]
                }
            };
        }
        Ok(StorageBuffer::from_vec(out))
    }
}

fn u64_at(d: &[u8], o: usize) -> u64 {
    u64::from_le_bytes(d[o..o + 8].try_into().unwrap())
}

/// The 41 GB file: checks the fixture's bytes are what the offsets above say, then patches
/// dims, maxdims, the layout's address and size, and the superblock's end of file.
fn virtual_single() -> Arc<VirtualStorage> {
    let mut head = fixture("dev_small_single.h5");
    let orig_len = head.len() as u64;
    assert_eq!(u64_at(&head, EOF_AT), orig_len, "superblock EOF");
    let dims: Vec<u64> = (0..3).map(|k| u64_at(&head, DIMS_AT + 8 * k)).collect();
    let maxdims: Vec<u64> = (0..3).map(|k| u64_at(&head, MAXDIMS_AT + 8 * k)).collect();
    assert_eq!((dims.as_slice(), maxdims.as_slice()), (&[256, 64, 64][..], &[256, 64, 64][..]), "dataspace");
    assert_eq!(head[LAYOUT_AT..LAYOUT_AT + 2], [3, 1], "layout v3 contiguous");
    assert_eq!((u64_at(&head, LAYOUT_AT + 2), u64_at(&head, LAYOUT_AT + 10)), (ORIG_DATA, ORIG_FRAMES * FRAME_BYTES), "layout address, size");
    let data_at = orig_len.next_multiple_of(4096);
    let size = FRAMES * FRAME_BYTES;
    for (at, v) in [(EOF_AT, data_at + size), (DIMS_AT, FRAMES), (MAXDIMS_AT, FRAMES), (LAYOUT_AT + 2, data_at), (LAYOUT_AT + 10, size)] {
        head[at..at + 8].copy_from_slice(&v.to_le_bytes());
    }
    Arc::new(VirtualStorage { head, data_at, len: data_at + size })
}

/// Pixel `i` of frame `f` as the virtual file stores it.
fn expected(v: &VirtualStorage, f: u64, i: u64) -> u64 {
    if f < ORIG_FRAMES {
        let at = (ORIG_DATA + f * FRAME_BYTES + 2 * i) as usize;
        u64::from(u16::from_le_bytes([v.head[at], v.head[at + 1]]))
    } else {
        u64::from(synth(f, i))
    }
}

const NAME: &str = "dev_small_single_huge.h5";

#[test]
fn a_41_gb_virtual_acquisition_opens_and_reads_frames_in_bounded_heap() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let v = virtual_single();
    let storage: DynStorage = v.clone();
    let mut rng = StdRng::seed_from_u64(5);
    let keep = ReadOptions { mask: MaskPolicy::Keep, bin: 1 };
    let px = 64 * 64;
    let mut peaks = Vec::new();

    // The file browser: shape and storage of the frames dataset, from metadata alone.
    let (t, peak) = measured(|| {
        let f = H5File::open(storage.clone(), NAME).unwrap();
        tree(&f, &TreeOptions::default())
    });
    peaks.push(("open + tree", peak));
    let NodeKind::Dataset(d) = &t.get("/entry/data/data").expect("frames dataset listed").kind else { panic!("not a dataset") };
    assert_eq!(d.shape, [FRAMES, 64, 64]);
    assert!(matches!(d.layout, StorageLayout::Contiguous { bytes } if bytes == FRAMES * FRAME_BYTES), "{:?}", d.layout);

    // Raw access at the hdf5 level: the last frame.
    let (last, peak) = measured(|| {
        let f = H5File::open(storage.clone(), NAME).unwrap();
        let ds = open_raw(&f, "/entry/data/data").unwrap();
        let mut buf = vec![0u8; FRAME_BYTES as usize];
        ds.read_contiguous_into(&f, (FRAMES - 1) * FRAME_BYTES, &mut buf).unwrap();
        buf
    });
    peaks.push(("open_raw + last frame", peak));
    for i in 0..px as u64 {
        assert_eq!(u64::from(u16::from_le_bytes([last[2 * i as usize], last[2 * i as usize + 1]])), expected(&v, FRAMES - 1, i));
    }

    // The acquisition (what `stem info` shows).
    let mut fs = MapFileSet::new();
    fs.insert(NAME, storage.clone());
    let (acq, peak) = measured(|| Acquisition::open(&fs, NAME, &Hints::default()).unwrap());
    peaks.push(("Acquisition::open", peak));
    assert!(acq.is_single_file());
    assert_eq!((acq.n_frames(), acq.det_shape(), acq.frame_bytes() as u64), (FRAMES, [64, 64], FRAME_BYTES));
    assert_eq!(acq.parts()[0].n_frames, FRAMES);

    // Frames at random indices (both regions of the virtual data), the edges between them, the last.
    let mut picks: Vec<u64> = vec![0, ORIG_FRAMES - 1, ORIG_FRAMES, FRAMES - 1];
    picks.extend((0..8).map(|_| rng.gen_range(0..ORIG_FRAMES)));
    picks.extend((0..24).map(|_| rng.gen_range(ORIG_FRAMES..FRAMES)));
    let (frames, peak) = measured(|| picks.iter().map(|&f| acq.frame_at(f, &keep).unwrap()).collect::<Vec<_>>());
    peaks.push(("32 frames at random indices", peak));
    for (&f, fr) in picks.iter().zip(&frames) {
        let got = fr.data.as_slice();
        for i in 0..px {
            assert_eq!(got.get(i), Some(expected(&v, f, i as u64)), "frame {f} pixel {i}");
        }
    }
    drop(frames);

    // A window of 512 consecutive frames (4 MiB) deep in the file, into reused buffers.
    let first = rng.gen_range(1_000_000..FRAMES - 512);
    let (mut data, mut buf) = (scatterlab_stem::load::PixelData::zeros(acq.pixel_kind(), 0), Vec::new());
    let ((), peak) = measured(|| {
        acq.read_frames_into(first, 512, MaskPolicy::Keep, &mut data, &mut buf).unwrap();
    });
    peaks.push(("window of 512 frames", peak));
    let got = data.as_slice();
    for k in [0u64, 1, 255, 511] {
        for i in (0..px).step_by(97) {
            assert_eq!(got.get(k as usize * px + i), Some(expected(&v, first + k, i as u64)), "frame {} pixel {i}", first + k);
        }
    }
    drop((data, buf));

    // Streaming: the first 8 batches (4 MiB each), crossing from real into synthetic frames.
    let (summary, peak) = measured(|| {
        let mut seen = 0;
        let mut on_batch = |b: scatterlab_stem::load::FrameBatch<'_>| {
            for k in [0, b.n - 1] {
                let f = b.first_frame + k as u64;
                for i in (0..px).step_by(61) {
                    assert_eq!(b.data.get(k * px + i), Some(expected(&v, f, i as u64)), "streamed frame {f} pixel {i}");
                }
            }
            seen += 1;
            if seen == 8 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let opts = StreamOptions { mask: MaskPolicy::Keep, batch_frames: 0 };
        acq.stream(&opts, &mut on_batch, &mut |_: u64, _: u64| {}, &CancelToken::new()).unwrap()
    });
    peaks.push(("stream 8 batches", peak));
    assert!(summary.stopped && summary.batches == 8 && summary.frames == 8 * 512, "{summary:?}");

    // Provenance hashes 41 GB by sampling (5.9 MiB read).
    let record = acq.frame_at(0, &keep).unwrap().record;
    let (prov, peak) = measured(|| acq.provenance(&fs, &record, Some(HashKind::Sha256SampledV1)).unwrap());
    peaks.push(("provenance (sampled hash)", peak));
    assert_eq!(prov.sources.len(), 1);
    assert_eq!(prov.sources[0].size, v.len);

    for (what, p) in &peaks {
        println!("huge: {what:28} peak heap {:6.2} MiB", *p as f64 / 1048576.0);
    }
    for (what, p) in &peaks {
        assert!(*p < HEAP_BOUND, "{what}: peak heap {p} bytes, over the 32 MiB bound");
    }
}

/// Chunk count, peak and retained heap of a warm `open_raw` of `path` in `file` (the second open:
/// the first also fills the 4 MiB metadata block cache).
fn open_heap(file: &str, bytes_of: Vec<u8>, path: &str) -> (usize, usize, usize) {
    let f = H5File::open(bytes(bytes_of), file).unwrap();
    drop(open_raw(&f, path).unwrap());
    let base = live();
    let (ds, peak) = measured(|| open_raw(&f, path).unwrap());
    let retained = usize::try_from(live() - base).unwrap_or(0);
    let n = ds.n_chunks();
    println!(
        "huge: open_raw {file} {path}: {n} chunks; warm peak {peak} B ({:.1} B/chunk), retained {retained} B ({:.1} B/chunk), \
         transient {} B",
        peak as f64 / n as f64,
        retained as f64 / n as f64,
        peak - retained
    );
    (n, peak, retained)
}

#[test]
fn chunked_open_heap_per_chunk() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    assert_eq!(std::mem::size_of::<scatterlab_hdf5::ChunkLoc>(), 16);
    let data = "/entry/data/data";
    // B-tree v1 (the Dectris layout) at two sizes whose index fits in the 4 MiB metadata cache:
    // what grows with the chunk count is the slope between them.
    let (n1, p1, r1) = open_heap("dev_small_data_000001.h5", fixture("dev_small_data_000001.h5"), data);
    let (n2, p2, r2) = open_heap("dev_medium_data_000004.h5", fixture("dev_medium_data_000004.h5"), data);
    let dn = (n2 - n1) as f64;
    let (slope_peak, slope_kept) = ((p2 as f64 - p1 as f64) / dn, (r2 as f64 - r1 as f64) / dn);
    println!(
        "huge: B-tree v1 per extra chunk: peak {slope_peak:.1} B, retained {slope_kept:.1} B; at 5 M chunks: \
         peak ≈ {:.0} MiB, retained ≈ {:.0} MiB",
        (p2 as f64 + slope_peak * (5e6 - n2 as f64)) / 1048576.0,
        (r2 as f64 + slope_kept * (5e6 - n2 as f64)) / 1048576.0
    );
    // The table (16 B) and the visited-node set (one address per ~32–64 chunks).
    assert!(slope_peak < 20.0 && slope_kept < 17.0, "B-tree v1: {slope_peak:.1} B peak, {slope_kept:.1} B kept per chunk");
    // A 4.9 MB file whose index is spread over more than the cache holds: the warm walk also
    // replaces cache blocks (64 KiB each), still a constant beyond the table.
    let (_, p3, r3) = open_heap("dev_medium_data_000001.h5", fixture("dev_medium_data_000001.h5"), data);
    for (p, r) in [(p2, r2), (p3, r3)] {
        assert!(p - r < 256 << 10, "B-tree v1 transient {} B", p - r);
    }
    // Fixed arrays are walked in slabs of 16,384 cells: the transient is one slab's walker entries
    // (~100 B each), whatever the chunk count. 17,000 cells = two slabs.
    let fa = concat!(env!("CARGO_MANIFEST_DIR"), "/../hdf5/tests/data/chunk_indexes_latest.h5");
    for (file, bytes_of, path) in
        [("dev_small_latest_data_000001.h5", fixture("dev_small_latest_data_000001.h5"), data), ("chunk_indexes_latest.h5", std::fs::read(fa).unwrap(), "/fa_paged")]
    {
        let (n, peak, retained) = open_heap(file, bytes_of, path);
        assert!(retained <= 16 * n + 4096, "{file}: {retained} B kept for {n} chunks");
        assert!(peak - retained < 4 << 20, "{file}: transient {} B", peak - retained);
    }
}
