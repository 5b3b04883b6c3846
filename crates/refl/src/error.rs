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
    /// A computed result came out non-finite (an overflow the input ranges could not rule out);
    /// the error names the curve and the first bad point instead of letting a NaN through.
    #[error("non-finite result: {0}")]
    NonFinite(InputError),
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
        self.map_object(|object| format!("curve {index}: {object}"))
    }

    /// Rewrites the named object of an input or non-finite error (to say where it came from);
    /// other errors pass unchanged.
    pub fn map_object(self, rename: impl FnOnce(&str) -> String) -> Self {
        match self {
            ReflError::Input(e) => ReflError::Input(InputError::new(rename(&e.object), e.problem)),
            ReflError::NonFinite(e) => ReflError::NonFinite(InputError::new(rename(&e.object), e.problem)),
            other => other,
        }
    }
}
