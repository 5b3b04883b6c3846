//! The Bloch crate's error type: every variant names the object that was wrong.

/// An error from parsing a crystal or running a Bloch-wave simulation.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BlochError {
    /// A CIF construct that is malformed or unsupported: the tag (or token) and its 1-based line.
    #[error("CIF {crystal}: line {line}: {tag}: {message}")]
    Cif {
        /// Crystal (data block) name, or the file name when the block has none yet.
        crystal: String,
        /// 1-based line of the offending construct.
        line: usize,
        /// The CIF tag (e.g. `_atom_site_fract_x`) or token concerned.
        tag: String,
        /// What is wrong.
        message: String,
    },
    /// An invalid input value (NaN, out of range, unknown element, …), naming the object.
    #[error(transparent)]
    Input(#[from] scatterlab_core::InputError),
    /// A numerical failure (eigensolver did not converge, matrix exponential overflow, …).
    #[error("{object}: {message}")]
    Numerical {
        /// What was being computed (e.g. `case "Si-200kV-00": structure matrix eigendecomposition`).
        object: String,
        /// What went wrong.
        message: String,
    },
}
