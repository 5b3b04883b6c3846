//! Walks a chunk index into the dense table ([`TableSink`]) with bounded transient heap.
//!
//! - B-tree v1 (every superblock v0–v2 file, so Dectris/ARINA data): our own depth-first walk,
//!   one node at a time, parsed with hdf5-reader's public [`BTreeV1Node::parse`]; each leaf entry
//!   goes straight into the table. Transient: the nodes on the current path, the set of visited
//!   node addresses (one per node, i.e. per ~32–64 chunks) and the recursion depth (≤ 256).
//! - Fixed array, extensible array, implicit: hdf5-reader's walkers with `chunk_bounds`, one slab
//!   of at most [`SLAB_CHUNKS`] grid cells at a time. Their bounded variants look up only the
//!   targeted entries (the fixed array and the extensible array read each entry at its computed
//!   position; the implicit index computes them), so a slab's transient is its own entries.
//! - Single chunk: one entry. B-tree v2 (several unlimited dimensions, not written by
//!   detectors): hdf5-reader's whole-index walker, whose transient grows with the chunk count
//!   (~190 B/chunk); its bounded variant still walks the whole tree per call, so slabs would
//!   make it quadratic.

use std::collections::HashSet;

use hdf5_reader::btree_v1::{BTreeV1Key, BTreeV1Node};
use hdf5_reader::chunk_index::{self, ChunkEntry};
use hdf5_reader::extensible_array::collect_extensible_array_chunk_entries_storage;
use hdf5_reader::fixed_array::collect_fixed_array_chunk_entries_storage;
use hdf5_reader::io::Cursor;
use hdf5_reader::messages::layout::ChunkIndexing;
use hdf5_reader::storage::Storage;

use super::index::TableSink;
use crate::error::Result;

/// Grid cells per slab of the array walks: ~100 B of walker entries each, so ~1.6 MiB per slab.
/// Each slab also rereads the array's header (and a fixed array's page bitmap), so slabs must
/// not be tiny either.
pub(super) const SLAB_CHUNKS: u64 = 16_384;

/// hdf5-reader's limit on B-tree v1 depth (a forged tree must not exhaust the stack).
const MAX_BTREE_V1_DEPTH: usize = 256;

/// Writes every entry of the index at `address` into `sink`.
pub(super) fn walk_index(sink: &mut TableSink<'_>, address: u64, indexing: Option<&ChunkIndexing>, osz: u8, lsz: u8) -> Result<()> {
    let ctx = sink.ctx;
    let st = ctx.file.reader().storage();
    let shape = ctx.ds.shape();
    let dims = sink.dims;
    match indexing {
        None => BTreeV1Walk { st, osz, lsz, ndim: shape.len(), visited: HashSet::new() }.visit(sink, address, MAX_BTREE_V1_DEPTH),
        Some(ChunkIndexing::SingleChunk { filtered_size, filters }) => put_all(sink, vec![chunk_index::single_chunk_entry(address, *filtered_size, *filters, shape.len())]),
        // libhdf5 numbers fixed-array entries and implicit chunks row-major over the chunk grid
        // at the maximum dimensions (`max_down_chunks`; the first dimension's extent never enters
        // the strides), hdf5-reader over the current one: they differ when a fixed maximum exceeds
        // the current size after the first dimension. So the walkers get the shape at the
        // maximum for numbering, and the slabs stay inside the current grid.
        Some(ChunkIndexing::Implicit) => {
            let numbered = numbering_shape(shape, ctx.ds.max_dims());
            // The walker checks that the chunks fit in the file per call; per slab that check
            // would pass for a forged total, so it is made once here for the whole grid.
            let (n, chunk_bytes) = (sink.grid.iter().product::<u64>(), u64::from(sink.chunk_bytes));
            if chunk_bytes > 0 && n > (st.len() / chunk_bytes).saturating_add(1) {
                return Err(ctx.format(format!("implicit index declares {n} chunks ({chunk_bytes} bytes each) but the file has only {} bytes", st.len())));
            }
            by_slabs(sink, |b| chunk_index::collect_implicit_chunk_entries(address, &numbered, dims, ctx.es, b, st.len()))
        }
        Some(ChunkIndexing::FixedArray { .. }) => {
            let numbered = numbering_shape(shape, ctx.ds.max_dims());
            by_slabs(sink, |b| collect_fixed_array_chunk_entries_storage(st, address, osz, lsz, &numbered, dims, b))
        }
        Some(ChunkIndexing::ExtensibleArray { .. }) => by_slabs(sink, |b| collect_extensible_array_chunk_entries_storage(st, address, osz, lsz, shape, ctx.ds.max_dims(), dims, b)),
        Some(ChunkIndexing::BTreeV2) => {
            let found = chunk_index::collect_v2_chunk_entries_storage(st, address, osz, lsz, rank_u32(shape.len()), dims, None);
            put_all(sink, found.map_err(|e| ctx.reader_err(e))?)
        }
    }
}

/// The shape whose chunk grid numbers a fixed array's or an implicit index's chunks: the maximum
/// dimensions after the first (where finite and not below the current size), the current first.
fn numbering_shape(shape: &[u64], max_dims: Option<&[u64]>) -> Vec<u64> {
    match max_dims {
        Some(max) if max.len() == shape.len() => shape.iter().zip(max).enumerate().map(|(d, (&s, &m))| if d == 0 || m == u64::MAX { s } else { s.max(m) }).collect(),
        _ => shape.to_vec(),
    }
}

fn put_all(sink: &mut TableSink<'_>, found: Vec<ChunkEntry>) -> Result<()> {
    found.iter().try_for_each(|e| sink.put(&e.offsets, e.address, e.size, e.filter_mask))
}

/// Runs a bounded walker over the grid slab by slab ([`Slabs`]), each slab's entries into `sink`.
fn by_slabs(sink: &mut TableSink<'_>, mut walker: impl FnMut(Option<(&[u64], &[u64])>) -> hdf5_reader::error::Result<Vec<ChunkEntry>>) -> Result<()> {
    if sink.grid.is_empty() {
        // A chunked scalar (not written by libhdf5, but parseable): its one entry, unbounded.
        let found = walker(None).map_err(|e| sink.ctx.reader_err(e))?;
        return put_all(sink, found);
    }
    let mut slabs = Slabs::new(sink.grid, SLAB_CHUNKS);
    while let Some((first, last)) = slabs.next_slab() {
        let found = walker(Some((first, last))).map_err(|e| sink.ctx.reader_err(e))?;
        put_all(sink, found)?;
    }
    Ok(())
}

/// Boxes of a chunk grid, each of at most `max` cells (at least one row of the last dimension),
/// covering the grid once in row-major order: whole rows of the first dimension when a row of it
/// fits, else single indices along the leading dimensions and a run along the first dimension
/// whose trailing cells fit.
pub(super) struct Slabs {
    grid: Vec<u64>,
    /// The dimension split into runs; dimensions before it advance one index at a time.
    split: usize,
    /// Run length along `split`.
    step: u64,
    /// Where the next box starts (dimensions `..=split`; those after it are whole).
    next: Option<Vec<u64>>,
    first: Vec<u64>,
    last: Vec<u64>,
}

impl Slabs {
    /// Slabs of `grid` (no slab at all when a dimension is 0).
    pub(super) fn new(grid: &[u64], max: u64) -> Self {
        let ndim = grid.len();
        // Trailing cells of dimension k: the product of the dimensions after it.
        let mut split = ndim.saturating_sub(1);
        let mut trailing = 1u64;
        while split > 0 && trailing.saturating_mul(grid[split]) <= max {
            trailing *= grid[split];
            split -= 1;
        }
        let step = (max / trailing.max(1)).max(1);
        let next = (ndim > 0 && !grid.contains(&0)).then(|| vec![0; ndim]);
        Self { grid: grid.to_vec(), split, step, next, first: vec![0; ndim], last: vec![0; ndim] }
    }

    /// The next box as inclusive (first, last) chunk indices per dimension.
    pub(super) fn next_slab(&mut self) -> Option<(&[u64], &[u64])> {
        let cur = self.next.take()?;
        let k = self.split;
        let step = self.step;
        let cells = cur.iter().zip(&self.grid).zip(self.first.iter_mut().zip(self.last.iter_mut()));
        for (d, ((&c, &g), (first, last))) in cells.enumerate() {
            // `g` > 0 (a grid with a zero dimension has no slabs) and `c` < `g`.
            (*first, *last) = match d.cmp(&k) {
                std::cmp::Ordering::Less => (c, c),
                std::cmp::Ordering::Equal => (c, c.saturating_add(step).min(g) - 1),
                std::cmp::Ordering::Greater => (0, g - 1),
            };
        }
        // Advance like an odometer over dimensions ..=k, dimension k by `step`.
        let mut n = cur;
        let mut d = k;
        n[d] = self.last[d] + 1;
        while n[d] >= self.grid[d] {
            n[d] = 0;
            if d == 0 {
                return Some((&self.first, &self.last));
            }
            d -= 1;
            n[d] += 1;
        }
        self.next = Some(n);
        Some((&self.first, &self.last))
    }
}

/// The depth-first walk of a chunk B-tree v1 with hdf5-reader's guards: node signature, no node
/// visited twice, depth ≤ [`MAX_BTREE_V1_DEPTH`].
struct BTreeV1Walk<'a> {
    st: &'a dyn Storage,
    osz: u8,
    lsz: u8,
    ndim: usize,
    visited: HashSet<u64>,
}

impl BTreeV1Walk<'_> {
    fn visit(&mut self, sink: &mut TableSink<'_>, address: u64, depth_left: usize) -> Result<()> {
        let ctx = sink.ctx;
        if Cursor::is_undefined_offset(address, self.osz) {
            return Ok(());
        }
        if depth_left == 0 {
            return Err(ctx.format("chunk B-tree v1 deeper than 256 levels"));
        }
        if !self.visited.insert(address) {
            return Err(ctx.format(format!("chunk B-tree v1 revisits node at offset {address:#x}")));
        }
        let node = self.read_node(sink, address)?;
        if node.level == 0 {
            for (key, &child) in node.keys.iter().zip(&node.children) {
                let BTreeV1Key::RawData { chunk_size, filter_mask, offsets } = key else {
                    return Err(ctx.format("group key in a chunk B-tree"));
                };
                // The key has one more offset (into the element), always 0.
                let offsets = offsets.get(..self.ndim).unwrap_or(offsets);
                sink.put(offsets, child, u64::from(*chunk_size), *filter_mask)?;
            }
            return Ok(());
        }
        // Only the child addresses stay while the subtrees are walked.
        let children = node.children;
        drop(node.keys);
        for child in children {
            self.visit(sink, child, depth_left - 1)?;
        }
        Ok(())
    }

    /// Reads and parses the node at `address`: its header first, which gives the node's length.
    fn read_node(&self, sink: &TableSink<'_>, address: u64) -> Result<BTreeV1Node> {
        let ctx = sink.ctx;
        let header_len = 8 + 2 * usize::from(self.osz);
        let header = self.st.read_range(address, header_len).map_err(|e| ctx.reader_err(e))?;
        let mut cursor = Cursor::new(header.as_ref());
        let (node_type, entries_used) = (|| {
            if cursor.read_bytes(4)? != b"TREE" {
                return Err(hdf5_reader::error::Error::InvalidBTreeSignature);
            }
            let node_type = cursor.read_u8()?;
            let _level = cursor.read_u8()?;
            Ok((node_type, usize::from(cursor.read_u16_le()?)))
        })()
        .map_err(|e| ctx.reader_err(e))?;
        if node_type != 1 {
            return Err(ctx.format(format!("B-tree v1 node of type {node_type} at {address:#x} in a chunk index")));
        }
        // chunk size (4) + filter mask (4) + (rank + 1) offsets of 8 bytes each (not offset_size).
        let key_len = 8 + (self.ndim + 1) * 8;
        let node_len = header_len + (entries_used + 1) * key_len + entries_used * usize::from(self.osz);
        let bytes = self.st.read_range(address, node_len).map_err(|e| ctx.reader_err(e))?;
        let mut cursor = Cursor::new(bytes.as_ref());
        BTreeV1Node::parse(&mut cursor, self.osz, self.lsz, Some(rank_u32(self.ndim))).map_err(|e| ctx.reader_err(e))
    }
}

/// A dataspace rank as the u32 the chunk-index parsers take: HDF5 stores the rank in one byte
/// (at most 32), so it always fits; saturating keeps the conversion total.
fn rank_u32(rank: usize) -> u32 {
    u32::try_from(rank).unwrap_or(u32::MAX)
}

#[cfg(test)]
mod tests {
    use super::Slabs;

    /// The cells of the box `first..=last`, row-major.
    fn cells(first: &[u64], last: &[u64]) -> Vec<Vec<u64>> {
        let mut out = vec![Vec::new()];
        for (&a, &b) in first.iter().zip(last) {
            out = out.into_iter().flat_map(|c| (a..=b).map(move |i| [c.as_slice(), &[i]].concat())).collect();
        }
        out
    }

    /// Every cell of `grid` exactly once, in row-major order, no slab over `max` cells.
    fn check(grid: &[u64], max: u64) {
        let mut s = Slabs::new(grid, max);
        let mut seen = Vec::new();
        while let Some((first, last)) = s.next_slab() {
            let c = cells(first, last);
            assert!(c.len() as u64 <= max, "{grid:?} max {max}: slab {first:?}..={last:?}");
            seen.extend(c);
        }
        let all = cells(&vec![0; grid.len()], &grid.iter().map(|g| g - 1).collect::<Vec<_>>());
        assert_eq!(seen, all, "{grid:?} max {max}");
    }

    #[test]
    fn slabs_cover_the_grid_once_in_order() {
        for grid in [vec![1], vec![7], vec![10, 3], vec![5, 4, 3], vec![2, 9, 2, 2], vec![3, 1, 7]] {
            for max in [1, 2, 3, 5, 6, 12, 13, 100] {
                check(&grid, max);
            }
        }
        assert!(Slabs::new(&[4, 0, 2], 8).next_slab().is_none());
        assert!(Slabs::new(&[], 8).next_slab().is_none());
    }
}
