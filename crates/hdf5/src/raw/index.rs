//! The dense chunk table, from any of HDF5's six chunk index types through hdf5-reader's public
//! walkers (B-tree v1, single chunk, implicit, fixed array, extensible array, B-tree v2).

use hdf5_reader::btree_v1::{collect_btree_v1_leaves_storage, BTreeV1Key};
use hdf5_reader::chunk_index::{self, ChunkEntry};
use hdf5_reader::extensible_array::collect_extensible_array_chunk_entries_storage;
use hdf5_reader::fixed_array::collect_fixed_array_chunk_entries_storage;
use hdf5_reader::io::Cursor;
use hdf5_reader::messages::layout::ChunkIndexing;
use hdf5_reader::Dataset;

use super::{ChunkIndexKind, ChunkLoc, RawLayout};
use crate::error::{H5Error, Result};
use crate::file::H5File;

/// Most chunks a table may have (1 GiB of table): a guard against forged shapes, far above any
/// acquisition (a 4096 × 4096 scan chunked per frame is 16.8 M chunks).
pub const MAX_CHUNKS: u64 = 1 << 26;

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
    fn format(&self, detail: impl Into<String>) -> H5Error {
        H5Error::Format { file: self.file.name().to_string(), object: self.path.to_string(), detail: detail.into() }
    }
}

/// Builds the chunked layout: chunk shape, grid and one [`ChunkLoc`] per grid cell.
pub(super) fn chunk_table(
    ctx: &IndexContext<'_>,
    address: u64,
    mut dims: Vec<u32>,
    indexing: Option<&ChunkIndexing>,
) -> Result<RawLayout> {
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
    let n = grid.iter().try_fold(1u64, |a, &g| a.checked_mul(g)).filter(|&n| n <= MAX_CHUNKS).ok_or_else(|| {
        H5Error::Limit {
            file: ctx.file.name().to_string(),
            object: ctx.path.to_string(),
            what: format!("chunk table for grid {grid:?}"),
            requested: grid.iter().fold(16u64, |a, &g| a.saturating_mul(g)),
            limit: MAX_CHUNKS * 16,
        }
    })?;
    let chunk_bytes = dims
        .iter()
        .try_fold(ctx.es as u64, |a, &d| a.checked_mul(u64::from(d)))
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| ctx.format(format!("chunk of {dims:?} × {} bytes exceeds 4 GiB", ctx.es)))?;
    let unallocated = ChunkLoc { addr: ChunkLoc::UNALLOCATED, size: 0, mask: 0 };
    // Fallible: a forged shape may ask for up to 1 GiB, which must be an error, not an abort.
    let mut entries = Vec::new();
    entries.try_reserve_exact(n as usize).map_err(|_| H5Error::Limit {
        file: ctx.file.name().to_string(),
        object: ctx.path.to_string(),
        what: "chunk table (allocation failed)".into(),
        requested: n * 16,
        limit: n * 16,
    })?;
    entries.resize(n as usize, unallocated);
    let h5 = ctx.file.reader();
    let (osz, lsz) = (h5.superblock().offset_size, h5.superblock().length_size);
    let found = if n == 0 || Cursor::is_undefined_offset(address, osz) {
        Vec::new()
    } else {
        walk(ctx, address, &dims, indexing, osz, lsz).map_err(|e| ctx.file.err(ctx.path, e))?
    };
    for e in found {
        if Cursor::is_undefined_offset(e.address, osz) {
            continue;
        }
        let Some(idx) = grid_index(ctx, &e.offsets, shape, &dims, &grid)? else { continue };
        let size = if ctx.filtered {
            u32::try_from(e.size).map_err(|_| ctx.format(format!("chunk {:?} stored size {} exceeds 4 GiB", e.offsets, e.size)))?
        } else {
            // Unfiltered chunks are stored whole; B-tree v2 records leave their size 0.
            chunk_bytes
        };
        let slot = entries.get_mut(idx).ok_or_else(|| ctx.format("chunk index past the table"))?;
        if slot.is_stored() {
            return Err(ctx.format(format!("chunk {:?} is indexed twice", e.offsets)));
        }
        *slot = ChunkLoc { addr: e.address, size, mask: e.filter_mask };
    }
    let dims = dims.into_iter().map(u64::from).collect();
    let index = match indexing {
        None => ChunkIndexKind::BTreeV1,
        Some(ChunkIndexing::SingleChunk { .. }) => ChunkIndexKind::SingleChunk,
        Some(ChunkIndexing::Implicit) => ChunkIndexKind::Implicit,
        Some(ChunkIndexing::FixedArray { .. }) => ChunkIndexKind::FixedArray,
        Some(ChunkIndexing::ExtensibleArray { .. }) => ChunkIndexKind::ExtensibleArray,
        Some(ChunkIndexing::BTreeV2) => ChunkIndexKind::BTreeV2,
    };
    Ok(RawLayout::Chunked { index, dims, grid, entries })
}

/// Row-major grid cell of a chunk at element `offsets`; `None` for a stale chunk wholly outside
/// the current extent (HDF5 keeps them after a shrink; hdf5-reader skips them too).
fn grid_index(ctx: &IndexContext<'_>, offsets: &[u64], shape: &[u64], dims: &[u32], grid: &[u64]) -> Result<Option<usize>> {
    if offsets.len() != shape.len() {
        return Err(ctx.format(format!("chunk offsets {offsets:?} do not match rank {}", shape.len())));
    }
    let mut idx = 0u64;
    for (((&o, &s), &d), &g) in offsets.iter().zip(shape).zip(dims).zip(grid) {
        let d = u64::from(d);
        if o % d != 0 {
            return Err(ctx.format(format!("chunk offsets {offsets:?} are not on the chunk grid {dims:?}")));
        }
        if o >= s {
            return Ok(None);
        }
        idx = idx * g + o / d;
    }
    usize::try_from(idx).map(Some).map_err(|_| ctx.format("chunk index overflows"))
}

/// Collects the index's entries with the walker for its type.
fn walk(
    ctx: &IndexContext<'_>,
    address: u64,
    dims: &[u32],
    indexing: Option<&ChunkIndexing>,
    osz: u8,
    lsz: u8,
) -> hdf5_reader::error::Result<Vec<ChunkEntry>> {
    let st = ctx.file.reader().storage();
    let shape = ctx.ds.shape();
    let ndim = shape.len();
    match indexing {
        None => {
            let leaves = collect_btree_v1_leaves_storage(st, address, osz, lsz, Some(ndim as u32), dims, None)?;
            leaves
                .into_iter()
                .map(|(key, addr)| match key {
                    BTreeV1Key::RawData { chunk_size, filter_mask, offsets } => Ok(ChunkEntry {
                        address: addr,
                        size: u64::from(chunk_size),
                        filter_mask,
                        // The key has one more offset (into the element), always 0.
                        offsets: offsets.get(..ndim).map(<[u64]>::to_vec).unwrap_or(offsets),
                    }),
                    BTreeV1Key::Group { .. } => {
                        Err(hdf5_reader::error::Error::InvalidData("group key in a chunk B-tree".into()))
                    }
                })
                .collect()
        }
        Some(ChunkIndexing::SingleChunk { filtered_size, filters }) => {
            Ok(vec![chunk_index::single_chunk_entry(address, *filtered_size, *filters, ndim)])
        }
        Some(ChunkIndexing::Implicit) => chunk_index::collect_implicit_chunk_entries(address, shape, dims, ctx.es, None, st.len()),
        Some(ChunkIndexing::FixedArray { .. }) => collect_fixed_array_chunk_entries_storage(st, address, osz, lsz, shape, dims, None),
        Some(ChunkIndexing::ExtensibleArray { .. }) => {
            collect_extensible_array_chunk_entries_storage(st, address, osz, lsz, shape, ctx.ds.max_dims(), dims, None)
        }
        Some(ChunkIndexing::BTreeV2) => chunk_index::collect_v2_chunk_entries_storage(st, address, osz, lsz, ndim as u32, dims, None),
    }
}
