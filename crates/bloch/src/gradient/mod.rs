//! Gradients of Bloch-wave intensities with respect to the structure (free positions, U_iso,
//! U_aniso, occupancies), the thickness and the orientation of each frame, for a frozen plan
//! (optics, beam sets and hkl grid fixed at the start model, as diffBloch freezes them).
//!
//! The chain is parameters → F(h) ([`structure_factor`]) → structure matrix A ([`matrix`]) →
//! ψ(t) = exp(iπt/K·A)e₀ ([`eigen`]: Daleckii–Krein with divided differences as quotients or,
//! below a 1 rad phase gap, a series, finite and exact at degenerate eigenvalues) → I = |ψ|²; [`model`]
//! assembles forward (Jacobian) and reverse (scalar loss) modes. Absorptive (non-Hermitian) matrices
//! go through the Taylor propagator instead ([`taylor`]: forward duals and the discrete adjoint). Design and derivations:
//! `docs/plans/bloch-gradients.md`. Only diffBloch's conventions are supported.

pub mod directions;
pub mod eigen;
pub mod frame;
pub mod frechet;
pub mod matrix;
pub mod model;
pub mod params;
pub mod propagator;
pub mod real_eigen;
pub mod structure_factor;
pub mod structure_factor_vjp;
pub mod support;
pub mod taylor;

pub use frame::FramePlan;
pub use model::GradientModel;
pub use params::Param;
