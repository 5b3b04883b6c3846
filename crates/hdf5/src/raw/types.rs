//! The value types of raw access: element type, chunk locations, layouts, filters.

use hdf5_reader::Datatype;

/// Kind of number an element holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NumberKind {
    /// Unsigned integer.
    Unsigned,
    /// Signed integer.
    Signed,
    /// IEEE float.
    Float,
    /// Anything else (strings, compounds, …): only its byte size is known here.
    Other,
}

/// The element type of a dataset, as far as raw access needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PixelType {
    /// Integer, float or other.
    pub kind: NumberKind,
    /// Bytes per element.
    pub size: usize,
    /// Stored big-endian (detectors write little-endian).
    pub big_endian: bool,
}

impl PixelType {
    pub(super) fn from_datatype(dt: &Datatype, size: usize) -> Self {
        use hdf5_reader::ByteOrder::BigEndian;
        match dt {
            Datatype::FixedPoint { signed, byte_order, .. } => {
                Self { kind: if *signed { NumberKind::Signed } else { NumberKind::Unsigned }, size, big_endian: *byte_order == BigEndian }
            }
            Datatype::FloatingPoint { byte_order, .. } => Self { kind: NumberKind::Float, size, big_endian: *byte_order == BigEndian },
            _ => Self { kind: NumberKind::Other, size, big_endian: false },
        }
    }
}

/// Where one chunk is stored: 16 bytes per chunk, so a table of a million frames is 16 MB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChunkLoc {
    /// HDF5 address of the stored bytes, [`ChunkLoc::UNALLOCATED`] if the chunk was never written.
    pub addr: u64,
    /// Stored (filtered) bytes.
    pub size: u32,
    /// Filter mask: bit `i` set = filter `i` of the pipeline was skipped for this chunk.
    pub mask: u32,
}

impl ChunkLoc {
    /// The address of a chunk that has no storage (reads give the fill value).
    pub const UNALLOCATED: u64 = u64::MAX;

    /// Whether the chunk has stored bytes.
    pub fn is_stored(&self) -> bool {
        self.addr != Self::UNALLOCATED
    }
}

/// How a dataset's data is stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RawLayout {
    /// Data inline in the object header.
    Compact {
        /// The bytes.
        data: Vec<u8>,
    },
    /// One block of `size` bytes at `addr` ([`ChunkLoc::UNALLOCATED`] if never written).
    Contiguous {
        /// HDF5 address.
        addr: u64,
        /// Bytes.
        size: u64,
    },
    /// Chunks of `dims` elements; `entries` in row-major order of the chunk grid (for a
    /// `(frames, rows, cols)` dataset chunked per frame, entry `i` is frame `i`).
    Chunked {
        /// The index type the file uses (for the file browser and tests).
        index: ChunkIndexKind,
        /// Chunk shape in elements.
        dims: Vec<u64>,
        /// Chunks per dimension.
        grid: Vec<u64>,
        /// One location per grid cell.
        entries: Vec<ChunkLoc>,
    },
}

/// HDF5's chunk index types (layout message v3: B-tree v1 only; v4: all).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChunkIndexKind {
    /// Version 1 B-tree (superblock v0–v2 files).
    BTreeV1,
    /// One chunk, no index.
    SingleChunk,
    /// Unfiltered fixed-size datasets: chunks in order at one address.
    Implicit,
    /// Fixed array (fixed-size datasets, `libver="latest"`).
    FixedArray,
    /// Extensible array (one unlimited dimension).
    ExtensibleArray,
    /// Version 2 B-tree (several unlimited dimensions).
    BTreeV2,
}

impl ChunkIndexKind {
    /// The kind of a layout message's chunk indexing (`None`: a v3 layout message, whose only
    /// index is the v1 B-tree). One mapping for the raw chunk tables and the file browser's tree.
    pub(crate) fn of(indexing: Option<&hdf5_reader::messages::layout::ChunkIndexing>) -> Self {
        use hdf5_reader::messages::layout::ChunkIndexing;
        match indexing {
            None => Self::BTreeV1,
            Some(ChunkIndexing::SingleChunk { .. }) => Self::SingleChunk,
            Some(ChunkIndexing::Implicit) => Self::Implicit,
            Some(ChunkIndexing::FixedArray { .. }) => Self::FixedArray,
            Some(ChunkIndexing::ExtensibleArray { .. }) => Self::ExtensibleArray,
            Some(ChunkIndexing::BTreeV2) => Self::BTreeV2,
        }
    }
}

/// One filter of a dataset's pipeline, in the order it was applied when writing.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Filter {
    /// HDF5 filter id.
    pub id: u16,
    /// The registered name ([`crate::filters::filter_name`]); the name stored in the file when the id
    /// is not registered; else `"unknown"`.
    pub name: String,
    /// The name the writer stored in the file, if any (`"bitshuffle; see https://…"`).
    pub stored_name: Option<String>,
    /// The filter's parameters (cd_values).
    pub client_data: Vec<u32>,
    /// Whether this crate decodes it.
    pub supported: bool,
}

impl Filter {
    /// Names a filter of a pipeline message: the registered name, else the one stored in the
    /// file, else `"unknown"`; and whether this crate decodes it.
    pub fn from_description(f: &hdf5_reader::messages::filter_pipeline::FilterDescription) -> Self {
        let stored_name = f.name.clone().filter(|n| !n.is_empty());
        let name = match (crate::filters::filter_name(f.id), &stored_name) {
            ("unknown", Some(n)) => n.clone(),
            (known, _) => known.to_string(),
        };
        Self { id: f.id, name, stored_name, client_data: f.client_data.clone(), supported: crate::filters::is_supported(f.id) }
    }
}
