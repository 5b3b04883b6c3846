//! Reflectivity errors: bad inputs name the offending object; GPU failures pass through.

use scatterlab_core::InputError;
use scatterlab_gpu::GpuError;

/// Everything the reflectivity engine can reject or fail with.
#[derive(Debug, thiserror::Error)]
pub enum ReflError {
    /// An input (layer, energy, q ...) is invalid; the error names it.
    #[error("invalid reflectivity input: {0}")]
    Input(#[from] InputError),
    /// The GPU backend failed.
    #[error(transparent)]
    Gpu(#[from] GpuError),
    /// A cases/model file could not be read.
    #[error("cannot read {what}: {message}")]
    Format {
        /// The file or object being read.
        what: String,
        /// What went wrong.
        message: String,
    },
}

impl ReflError {
    /// Shorthand for an [`InputError`] naming `object`.
    pub fn input(object: impl Into<String>, problem: impl Into<String>) -> Self {
        ReflError::Input(InputError::new(object, problem))
    }

    /// Prefixes the named object with the index of the curve in a batch.
    pub fn in_curve(self, index: usize) -> Self {
        match self {
            ReflError::Input(e) => ReflError::Input(InputError::new(format!("curve {index}: {}", e.object), e.problem)),
            other => other,
        }
    }
}
