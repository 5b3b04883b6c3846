//! Errors of this crate: every one names the file and the object (and chunk) it came from,
//! so a bad byte in a 20 GB acquisition can be found again.

/// An error while opening, walking or decoding an HDF5 file.
///
/// File bytes never panic this crate: whatever is wrong with them ends up here.
#[derive(Debug, thiserror::Error)]
pub enum H5Error {
    /// The file could not be opened as HDF5 (bad magic, unreadable superblock, storage failure).
    #[error("{file}: cannot open as HDF5: {source}")]
    Open {
        /// The file, as the user named it.
        file: String,
        /// What `hdf5-reader` or the storage reported.
        #[source]
        source: hdf5_reader::error::Error,
    },
    /// The file's structure (headers, indexes, messages) is not valid HDF5.
    #[error("{file}: {object}: {detail}")]
    Format {
        /// The file.
        file: String,
        /// The object path (or structure) being read.
        object: String,
        /// What is wrong.
        detail: String,
    },
    /// A dataset uses a filter this crate cannot decode.
    #[error("{file}: {dataset}: unsupported filter {id} ({name})")]
    UnsupportedFilter {
        /// The file.
        file: String,
        /// The dataset path.
        dataset: String,
        /// The HDF5 filter id.
        id: u16,
        /// Its registered name ([`crate::filters::filter_name`]) or the variant, e.g. `bitshuffle+zstd`.
        name: String,
    },
    /// Valid HDF5 that this crate does not read (virtual datasets, compact chunked data, …).
    #[error("{file}: {object}: unsupported {feature}")]
    UnsupportedFeature {
        /// The file.
        file: String,
        /// The object path.
        object: String,
        /// The feature, in words.
        feature: String,
    },
    /// A chunk's bytes do not decode: truncated, wrong sizes, bad LZ4 stream.
    #[error("{file}: {dataset}: chunk {chunk:?}: {detail}")]
    Corrupt {
        /// The file.
        file: String,
        /// The dataset path.
        dataset: String,
        /// The chunk's offset in dataset coordinates (element indices per dimension).
        chunk: Vec<u64>,
        /// What is wrong (a [`DecodeError`] in words).
        detail: String,
    },
    /// A file another one links to is not available (not picked, not on disk).
    #[error("missing file {name} (needed by {needed_by})")]
    MissingFile {
        /// The missing file's name.
        name: String,
        /// The object or file that refers to it.
        needed_by: String,
    },
    /// Reading the storage failed.
    #[error("{file}: read failed: {detail}")]
    Io {
        /// The file.
        file: String,
        /// The storage's message.
        detail: String,
    },
    /// The caller cancelled the operation.
    #[error("cancelled")]
    Cancelled,
    /// The file asks for more than a configured limit allows; nothing was allocated.
    #[error("{file}: {object}: {what} needs {requested} bytes, over the limit of {limit}")]
    Limit {
        /// The file.
        file: String,
        /// The object path.
        object: String,
        /// What was to be allocated or read.
        what: String,
        /// Bytes asked for.
        requested: u64,
        /// The limit in bytes.
        limit: u64,
    },
}

impl H5Error {
    /// Maps an hdf5-reader error about `object` in `file` onto ours: unsupported features and
    /// filters keep their kind (the file browser lists them per object), I/O stays I/O, and the
    /// rest is a format error carrying hdf5-reader's message.
    pub fn from_reader(file: &str, object: &str, e: hdf5_reader::error::Error) -> Self {
        use hdf5_reader::error::Error as E;
        let (file, object) = (file.to_string(), object.to_string());
        match e {
            E::Context { source, .. } => Self::from_reader(&file, &object, *source),
            E::Io(io) => Self::Io { file, detail: format!("{object}: {io}") },
            E::UnsupportedLayoutClass(3) => Self::UnsupportedFeature { file, object, feature: "virtual dataset (layout class 3)".into() },
            E::UnsupportedFilter(what) => {
                let id = what.strip_prefix("filter id ").and_then(|n| n.parse().ok()).unwrap_or(0);
                let name = if id == 0 { what } else { crate::filters::filter_name(id).to_string() };
                Self::UnsupportedFilter { file, dataset: object, id, name }
            }
            e @ (E::UnsupportedLayoutClass(_) | E::UnsupportedDatatypeClass(_) | E::UnsupportedEncoding(_) | E::UnsupportedChunkIndexType(_) | E::UnsupportedLinkType(_)) => {
                Self::UnsupportedFeature { file, object, feature: e.to_string() }
            }
            other => Self::Format { file, object, detail: other.to_string() },
        }
    }
}

/// Why a chunk failed to decode, before the caller adds file, dataset and chunk
/// ([`H5Error::Corrupt`]). The decoders in [`crate::filters`] return this.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// The input ends before a header, length or block it declares.
    #[error("{what}: truncated at byte {offset}: needs {need} bytes, {have} left")]
    Truncated {
        /// The part being read (`"bslz4 header"`, `"h5lz4 block 2"`, …).
        what: String,
        /// Byte offset in the input.
        offset: usize,
        /// Bytes needed.
        need: usize,
        /// Bytes available.
        have: usize,
    },
    /// A header field has an impossible value.
    #[error("{what}: {detail}")]
    Invalid {
        /// The field.
        what: String,
        /// Why it is impossible.
        detail: String,
    },
    /// A size disagrees with the one expected (declared total vs dataset chunk, decoded block).
    #[error("{what}: expected {expected} bytes, got {actual}")]
    SizeMismatch {
        /// What was measured.
        what: String,
        /// Expected bytes.
        expected: usize,
        /// Actual bytes.
        actual: usize,
    },
    /// The LZ4 block stream is malformed.
    #[error("LZ4 block {block}: {detail}")]
    Lz4 {
        /// Block index within the chunk.
        block: usize,
        /// The block decoder's message ([`crate::filters::lz4_block::Lz4Error`]).
        detail: String,
    },
    /// A valid variant this crate does not decode (bitshuffle+zstd, an unknown compression code).
    #[error("unsupported {feature}")]
    Unsupported {
        /// The variant, in words (`"bitshuffle+zstd"`).
        feature: String,
    },
}

impl DecodeError {
    /// Shorthand for [`DecodeError::Truncated`].
    pub(crate) fn truncated(what: impl Into<String>, offset: usize, need: usize, have: usize) -> Self {
        Self::Truncated { what: what.into(), offset, need, have }
    }

    /// Shorthand for [`DecodeError::Invalid`].
    pub(crate) fn invalid(what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self::Invalid { what: what.into(), detail: detail.into() }
    }

    /// Converts into `hdf5-reader`'s error, for filters registered in its [`hdf5_reader::FilterRegistry`].
    pub(crate) fn into_reader(self) -> hdf5_reader::error::Error {
        match self {
            Self::Unsupported { feature } => hdf5_reader::error::Error::UnsupportedFilter(feature),
            other => hdf5_reader::error::Error::DecompressionError(other.to_string()),
        }
    }
}

/// Result with [`H5Error`].
pub type Result<T, E = H5Error> = std::result::Result<T, E>;
