//! A dataset's description for the tree, from its object header alone (no chunk index walk,
//! no data read): shape, type, layout, chunking, filters and what this crate cannot decode.

use hdf5_reader::messages::layout::DataLayout;
use hdf5_reader::messages::HdfMessage;
use hdf5_reader::object_header::ObjectHeader;
use hdf5_reader::Dataset;
use serde::Serialize;

use crate::error::Result;
use crate::file::H5File;
use crate::raw::{ChunkIndexKind, Filter};
use crate::values::dtype_name;

/// What the tree shows of a dataset.
#[derive(Clone, Debug, Serialize)]
pub struct DatasetInfo {
    /// Shape in elements (empty = scalar).
    pub shape: Vec<u64>,
    /// Maximum shape, where it differs from `shape` (`u64::MAX` = unlimited).
    pub max_shape: Option<Vec<u64>>,
    /// Element type ([`dtype_name`]).
    pub dtype: String,
    /// Bytes per element.
    pub element_size: usize,
    /// How the data is stored.
    pub layout: StorageLayout,
    /// The filter pipeline in write order, each with its name and whether it is decoded here.
    pub filters: Vec<FilterInfo>,
    /// Why the data cannot be read, if it cannot (unsupported filter or feature), by name.
    pub unsupported: Option<String>,
}

/// A dataset's storage layout.
#[derive(Clone, Debug, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StorageLayout {
    /// Data inline in the object header.
    Compact {
        /// Bytes.
        bytes: u64,
    },
    /// One block in the file.
    Contiguous {
        /// Bytes stored (0 when never written).
        bytes: u64,
    },
    /// Chunks of `chunks` elements, found through `index`.
    Chunked {
        /// Chunk shape in elements.
        chunks: Vec<u64>,
        /// The chunk index type.
        index: ChunkIndexKind,
    },
}

/// One filter of the pipeline.
pub type FilterInfo = Filter;

/// Describes the dataset at `path` whose object header is `header`; also returns
/// hdf5-reader's handle (for its attributes).
pub(super) fn info(file: &H5File, path: &str, header: &ObjectHeader) -> Result<(DatasetInfo, Dataset)> {
    let ds = file.reader().dataset(path).map_err(|e| file.err(path, e))?;
    let element_size = ds.raw_element_size().map_err(|e| file.err(path, e))?;
    let shape = ds.shape().to_vec();
    let (mut layout, mut filters, mut external) = (None, Vec::new(), false);
    for msg in &header.messages {
        match msg {
            HdfMessage::DataLayout(m) => layout = Some(describe_layout(&m.layout, shape.len())),
            HdfMessage::FilterPipeline(p) => filters = p.filters.iter().map(Filter::from_description).collect(),
            HdfMessage::ExternalFiles(_) => external = true,
            _ => {}
        }
    }
    let layout = layout.unwrap_or(StorageLayout::Contiguous { bytes: 0 });
    let unsupported = if let Some(f) = filters.iter().find(|f: &&Filter| !f.supported) {
        Some(format!("unsupported filter {} ({})", f.id, f.name))
    } else if external {
        Some("unsupported feature: raw data in external files".to_string())
    } else if matches!(layout, StorageLayout::Chunked { .. }) && shape.is_empty() {
        Some("unsupported feature: chunked scalar".to_string())
    } else {
        None
    };
    let max_shape = ds.max_dims().filter(|m| *m != shape.as_slice()).map(<[u64]>::to_vec);
    let info = DatasetInfo { shape, max_shape, dtype: dtype_name(ds.dtype()), element_size, layout, filters, unsupported };
    Ok((info, ds))
}

fn describe_layout(l: &DataLayout, ndim: usize) -> StorageLayout {
    match l {
        DataLayout::Compact { data } => StorageLayout::Compact { bytes: data.len() as u64 },
        DataLayout::Contiguous { size, .. } => StorageLayout::Contiguous { bytes: *size },
        DataLayout::Chunked { dims, chunk_indexing, .. } => {
            // v1–v3 layout messages carry the element size as an extra last dimension.
            let chunks = dims.iter().take(ndim).map(|&d| u64::from(d)).collect();
            let index = ChunkIndexKind::of(chunk_indexing.as_ref());
            StorageLayout::Chunked { chunks, index }
        }
    }
}
