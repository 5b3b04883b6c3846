//! Errors of loading: every one names the file (and object or frame) it concerns.

use scatterlab_hdf5::H5Error;

/// An error while opening or reading an acquisition.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The HDF5 layer failed (file, object and chunk are in the message).
    #[error(transparent)]
    H5(#[from] H5Error),
    /// A frame lies in a data file that is not available.
    #[error("frame {frame} is in {file}, which is missing (linked from {master}:{link})")]
    MissingData {
        /// The frame asked for.
        frame: u64,
        /// The missing data file.
        file: String,
        /// The master file.
        master: String,
        /// The link in the master that names it.
        link: String,
    },
    /// A file named on the command line or linked from the master is not in the file set.
    #[error("missing file {file} (needed by {needed_by})")]
    MissingFile {
        /// The missing file.
        file: String,
        /// Who needs it.
        needed_by: String,
    },
    /// Metadata the operation needs is absent or inconsistent; the message says what was
    /// looked for and where.
    #[error("{file}: {detail}")]
    Metadata {
        /// The file.
        file: String,
        /// What is missing or wrong.
        detail: String,
    },
    /// The caller asked for something outside the acquisition (frame, region, bin factor).
    #[error("{0}")]
    Request(String),
    /// The caller cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// Result with [`LoadError`].
pub type Result<T, E = LoadError> = std::result::Result<T, E>;

/// `x`, a count or size read from `file`, as a usize: on wasm32 a file's 64-bit value can exceed
/// the address space, which is an error naming the file and `what`, never a truncation.
pub(crate) fn usize_of(x: u64, file: &str, what: &str) -> Result<usize> {
    usize::try_from(x).map_err(|_| LoadError::Request(format!("{file}: {what} {x} exceeds this platform's address space")))
}
