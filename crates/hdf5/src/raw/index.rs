//! The dense chunk table, from any of HDF5's six chunk index types.
//!
//! The table is allocated once (16 B per grid cell) and the index walk ([`super::walk`]) writes
//! each entry straight into it through a [`TableSink`], so opening holds the table plus a bounded
//! walk state, never a list of all entries (hdf5-reader's walkers return one `ChunkEntry` with its
//! own offsets `Vec` per chunk: ~186 B/chunk, ~0.9 GiB at 5 M chunks).

use hdf5_reader::io::Cursor;
use hdf5_reader::messages::layout::ChunkIndexing;
use hdf5_reader::Dataset;

use super::walk;
use super::{ChunkIndexKind, ChunkLoc, RawLayout};
use crate::error::{H5Error, Result};
use crate::file::H5File;

/// Most chunks a table may have (2²⁴: 256 MiB of table): a guard against forged shapes, as many as
/// a 4096 × 4096 scan chunked per frame, far beyond any acquisition. It was 2²⁶ (1 GiB) until the
/// fuzz campaign's `open_tree` forged a 7 KB file whose 27 M-chunk table took 435 MB and, walked
/// chunk by chunk under ASan at `nice 19`, 12 s; a wasm heap has 4 GiB in all.
pub const MAX_CHUNKS: u64 = 1 << 24;

/// What the walk needs to know about the dataset.
pub(super) struct IndexContext<'a> {
    pub file: &'a H5File,
    pub path: &'a str,
    pub ds: &'a Dataset,
    /// Bytes per element.
    pub es: usize,
    /// Whether the dataset has a filter pipeline (else every stored chunk is full size).
    pub filtered: bool,
}

impl IndexContext<'_> {
    /// A format error naming the file and the dataset.
    pub(super) fn format(&self, detail: impl Into<String>) -> H5Error {
        H5Error::Format { file: self.file.name().to_string(), object: self.path.to_string(), detail: detail.into() }
    }

    /// An hdf5-reader error of the walk, named with the file and the dataset.
    pub(super) fn reader_err(&self, e: hdf5_reader::error::Error) -> H5Error {
        self.file.err(self.path, e)
    }
}

/// The table being filled and what placing one index entry in it needs.
pub(super) struct TableSink<'a> {
    pub(super) ctx: &'a IndexContext<'a>,
    /// Chunk shape in elements (rank of the dataset).
    pub(super) dims: &'a [u32],
    /// Chunks per dimension.
    pub(super) grid: &'a [u64],
    /// Bytes of one unfiltered chunk.
    pub(super) chunk_bytes: u32,
    /// Superblock offset size (for undefined addresses).
    osz: u8,
    entries: Vec<ChunkLoc>,
}

impl TableSink<'_> {
    /// Places the entry of the chunk at element `offsets`: an undefined address is an unallocated
    /// chunk, a stale chunk outside the extent is skipped, a second entry for a cell is an error.
    pub(super) fn put(&mut self, offsets: &[u64], address: u64, size: u64, mask: u32) -> Result<()> {
        if Cursor::is_undefined_offset(address, self.osz) {
            return Ok(());
        }
        let Some(idx) = self.grid_index(offsets)? else { return Ok(()) };
        let size = if self.ctx.filtered {
            u32::try_from(size).map_err(|_| self.ctx.format(format!("chunk {offsets:?} stored size {size} exceeds 4 GiB")))?
        } else {
            // Unfiltered chunks are stored whole; B-tree v2 records leave their size 0.
            self.chunk_bytes
        };
        let slot = self.entries.get_mut(idx).ok_or_else(|| self.ctx.format("chunk index past the table"))?;
        if slot.is_stored() {
            return Err(self.ctx.format(format!("chunk {offsets:?} is indexed twice")));
        }
        *slot = ChunkLoc { addr: address, size, mask };
        Ok(())
    }

    /// Row-major grid cell of a chunk at element `offsets`; `None` for a stale chunk wholly
    /// outside the current extent (HDF5 keeps them after a shrink; hdf5-reader skips them too).
    fn grid_index(&self, offsets: &[u64]) -> Result<Option<usize>> {
        let shape = self.ctx.ds.shape();
        if offsets.len() != shape.len() {
            return Err(self.ctx.format(format!("chunk offsets {offsets:?} do not match rank {}", shape.len())));
        }
        let mut idx = 0u64;
        for (((&o, &s), &d), &g) in offsets.iter().zip(shape).zip(self.dims).zip(self.grid) {
            let d = u64::from(d);
            if o % d != 0 {
                return Err(self.ctx.format(format!("chunk offsets {offsets:?} are not on the chunk grid {:?}", self.dims)));
            }
            if o >= s {
                return Ok(None);
            }
            idx = idx * g + o / d;
        }
        usize::try_from(idx).map(Some).map_err(|_| self.ctx.format("chunk index overflows"))
    }
}

/// Builds the chunked layout: chunk shape, grid and one [`ChunkLoc`] per grid cell.
pub(super) fn chunk_table(ctx: &IndexContext<'_>, address: u64, mut dims: Vec<u32>, indexing: Option<&ChunkIndexing>) -> Result<RawLayout> {
    let shape = ctx.ds.shape();
    let ndim = shape.len();
    // Layout messages v1–v3 store the element size as an extra last chunk dimension.
    if dims.len() == ndim + 1 {
        dims.pop();
    }
    if dims.len() != ndim || dims.contains(&0) {
        return Err(ctx.format(format!("chunk shape {dims:?} does not fit dataset shape {shape:?}")));
    }
    let grid: Vec<u64> = shape.iter().zip(&dims).map(|(&s, &d)| s.div_ceil(u64::from(d))).collect();
    let n = grid.iter().try_fold(1u64, |a, &g| a.checked_mul(g)).filter(|&n| n <= MAX_CHUNKS).ok_or_else(|| H5Error::Limit {
        file: ctx.file.name().to_string(),
        object: ctx.path.to_string(),
        what: format!("chunk table for grid {grid:?}"),
        requested: grid.iter().fold(16u64, |a, &g| a.saturating_mul(g)),
        limit: MAX_CHUNKS * 16,
    })?;
    let chunk_bytes = dims
        .iter()
        .try_fold(ctx.es as u64, |a, &d| a.checked_mul(u64::from(d)))
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| ctx.format(format!("chunk of {dims:?} × {} bytes exceeds 4 GiB", ctx.es)))?;
    let unallocated = ChunkLoc { addr: ChunkLoc::UNALLOCATED, size: 0, mask: 0 };
    // Fallible: a forged shape may ask for up to 256 MiB, which must be an error, not an abort.
    let mut entries = Vec::new();
    // On wasm32 a u64 count can exceed usize: that is the same limit error, never a truncation.
    let n_entries = usize::try_from(n).ok().filter(|&k| entries.try_reserve_exact(k).is_ok()).ok_or_else(|| H5Error::Limit {
        file: ctx.file.name().to_string(),
        object: ctx.path.to_string(),
        what: "chunk table (allocation failed)".into(),
        requested: n.saturating_mul(16),
        limit: n.saturating_mul(16),
    })?;
    entries.resize(n_entries, unallocated);
    let h5 = ctx.file.reader();
    let (osz, lsz) = (h5.superblock().offset_size, h5.superblock().length_size);
    let mut sink = TableSink { ctx, dims: &dims, grid: &grid, chunk_bytes, osz, entries };
    if n > 0 && !Cursor::is_undefined_offset(address, osz) {
        walk::walk_index(&mut sink, address, indexing, osz, lsz)?;
    }
    let entries = sink.entries;
    let dims = dims.into_iter().map(u64::from).collect();
    Ok(RawLayout::Chunked { index: ChunkIndexKind::of(indexing), dims, grid, entries })
}
