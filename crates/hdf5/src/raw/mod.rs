//! Raw dataset access: where every chunk lies, its stored bytes, and decoding them into the
//! caller's buffer.
//!
//! hdf5-reader 0.12.1 keeps a dataset's layout and filters private and yields only decoded
//! chunks (each in a new allocation). Detector data wants the opposite: one dense table of chunk
//! locations, chunk bytes read many at a time, and decoding straight into a reused frame buffer.
//! So this module reads the layout and filter messages from the object header and fills the dense
//! table (`index.rs`) by walking the chunk index in bounded heap (`walk.rs`: our own B-tree v1
//! walk over hdf5-reader's node parser, its array walkers slab by slab); `read.rs` does the
//! coalesced reads and the decoding.

mod index;
mod read;
mod types;
mod walk;

use std::sync::OnceLock;

use hdf5_reader::messages::filter_pipeline::FilterDescription;
use hdf5_reader::messages::layout::DataLayout;
use hdf5_reader::messages::HdfMessage;

use crate::error::{H5Error, Result};
use crate::file::H5File;
use crate::filters::{self, BitshuffleCompression, BitshuffleParams};

pub use index::MAX_CHUNKS;
pub use read::{MAX_MERGED_READ, MERGE_GAP};
pub use types::{ChunkIndexKind, ChunkLoc, Filter, NumberKind, PixelType, RawLayout};

/// How chunks are decoded: straight into the caller's buffer where we can.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DecodePath {
    /// No filters: the stored bytes are the data.
    Plain,
    /// Bitshuffle+LZ4 alone.
    Bslz4 { es: usize },
    /// Bitshuffle without compression alone.
    Bitshuffle { es: usize, block: usize },
    /// HDF5 LZ4 alone.
    H5Lz4,
    /// Anything else: hdf5-reader's `apply_pipeline` with our registry, then a copy.
    Pipeline,
}

/// A dataset opened for raw access.
pub struct RawDataset {
    /// The dataset's path in the file.
    pub path: String,
    /// Shape in elements.
    pub shape: Vec<u64>,
    /// Element type.
    pub dtype: PixelType,
    /// Storage layout with the chunk table.
    pub layout: RawLayout,
    /// The filter pipeline (empty when unfiltered).
    pub filters: Vec<Filter>,
    pipeline: Vec<FilterDescription>,
    decode: DecodePath,
    /// One element of the fill value (what unallocated chunks read as).
    fill: Vec<u8>,
    file_name: String,
    /// Built on first use: only datasets outside the fast paths need it.
    registry: OnceLock<hdf5_reader::FilterRegistry>,
}

/// Opens dataset `path` of `file` for raw access: reads its layout and filters from the object
/// header and, for chunked data, builds the dense chunk table from the chunk index (any of
/// HDF5's six index types).
pub fn open_raw(file: &H5File, path: &str) -> Result<RawDataset> {
    let h5 = file.reader();
    let ds = h5.dataset(path).map_err(|e| file.err(path, e))?;
    let header = h5.get_or_parse_header(ds.address()).map_err(|e| file.err(path, e))?;
    let (mut layout, mut pipeline, mut external) = (None, Vec::new(), false);
    for msg in &header.messages {
        match msg {
            HdfMessage::DataLayout(m) => layout = Some(m.layout.clone()),
            HdfMessage::FilterPipeline(p) => pipeline = p.filters.clone(),
            HdfMessage::ExternalFiles(_) => external = true,
            _ => {}
        }
    }
    let unsupported = |feature: &str| H5Error::UnsupportedFeature { file: file.name().to_string(), object: path.to_string(), feature: feature.to_string() };
    if external {
        return Err(unsupported("raw data in external files"));
    }
    let layout = layout.ok_or_else(|| H5Error::Format { file: file.name().to_string(), object: path.to_string(), detail: "no data layout message".into() })?;
    let es = ds.raw_element_size().map_err(|e| file.err(path, e))?;
    let shape = ds.shape().to_vec();
    let dtype = PixelType::from_datatype(ds.dtype(), es);
    let fill = match ds.fill_value().and_then(|f| f.value.clone()) {
        Some(v) if v.len() == es => v,
        _ => vec![0; es],
    };
    let layout = match layout {
        DataLayout::Compact { data } => RawLayout::Compact { data },
        DataLayout::Contiguous { address, size } => RawLayout::Contiguous { addr: address, size },
        DataLayout::Chunked { address, dims, chunk_indexing, .. } => {
            let ctx = index::IndexContext { file, path, ds: &ds, es, filtered: !pipeline.is_empty() };
            index::chunk_table(&ctx, address, dims, chunk_indexing.as_ref())?
        }
    };
    let filters = pipeline.iter().map(Filter::from_description).collect();
    let decode = decode_path(&pipeline, es);
    Ok(RawDataset { path: path.to_string(), shape, dtype, layout, filters, pipeline, decode, fill, file_name: file.name().to_string(), registry: OnceLock::new() })
}

/// Picks the fast path for a pipeline (used when a chunk's filter mask is 0).
fn decode_path(pipeline: &[FilterDescription], es: usize) -> DecodePath {
    match pipeline {
        [] => DecodePath::Plain,
        [f] if f.id == filters::FILTER_LZ4 => DecodePath::H5Lz4,
        [f] if f.id == filters::FILTER_BITSHUFFLE => match BitshuffleParams::from_client_data(&f.client_data, es) {
            Ok(BitshuffleParams { compression: BitshuffleCompression::Lz4, elem_size, .. }) => DecodePath::Bslz4 { es: elem_size },
            Ok(BitshuffleParams { compression: BitshuffleCompression::None, elem_size, block }) => DecodePath::Bitshuffle { es: elem_size, block },
            _ => DecodePath::Pipeline,
        },
        _ => DecodePath::Pipeline,
    }
}

impl RawDataset {
    /// The file this dataset was opened from (for messages).
    pub fn file_name(&self) -> &str {
        &self.file_name
    }

    /// Bytes of one decoded chunk (chunks at the dataset's edge are stored full size too), or of
    /// the whole data for contiguous and compact layouts.
    ///
    /// A damaged shape whose size overflows gives `u64::MAX`, which no buffer can match.
    pub fn chunk_bytes(&self) -> u64 {
        let dims = match &self.layout {
            RawLayout::Chunked { dims, .. } => dims,
            _ => &self.shape,
        };
        // Saturating, not `product()`: the shape comes from the file (robust.rs found the overflow).
        dims.iter().fold(self.dtype.size as u64, |a, &d| a.saturating_mul(d))
    }

    /// Number of chunks (1 for contiguous and compact data).
    pub fn n_chunks(&self) -> usize {
        match &self.layout {
            RawLayout::Chunked { entries, .. } => entries.len(),
            _ => 1,
        }
    }

    /// Element offsets of chunk `idx` (its first element's index per dimension).
    pub fn chunk_offsets(&self, idx: usize) -> Vec<u64> {
        match &self.layout {
            RawLayout::Chunked { dims, grid, .. } => {
                let mut rest = idx as u64;
                let mut out = vec![0; grid.len()];
                for ((o, &g), &d) in out.iter_mut().zip(grid).zip(dims).rev() {
                    *o = (rest % g.max(1)) * d;
                    rest /= g.max(1);
                }
                out
            }
            _ => vec![0; self.shape.len()],
        }
    }

    /// The first unsupported filter of the pipeline, if any.
    pub fn unsupported_filter(&self) -> Option<&Filter> {
        self.filters.iter().find(|f| !f.supported)
    }
}
