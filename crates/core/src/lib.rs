//! Foundations shared by every scatterlab domain crate.
//!
//! Nothing here knows any science beyond physical constants: the domain crates
//! (`scatterlab-refl`, later STEM and Bloch) build on these types so that errors,
//! units, progress reporting and provenance look the same everywhere.

pub mod device;
pub mod error;
pub mod linalg;
pub mod npy;
pub mod process;
pub mod progress;
pub mod provenance;
pub mod simd;
pub mod units;

pub use device::DeviceKind;
pub use error::InputError;
pub use progress::{CancelToken, Cancelled, Progress};
pub use provenance::Provenance;

/// Version of scatterlab that produced a result (recorded in every [`Provenance`]).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
