//! Propagation of the Bloch-wave amplitudes through a thickness series by the action of the
//! matrix exponential on a vector: ψ(t) = exp(i·s·t·A) e₀ with s = π / K_n (diffBloch's
//! `psi(t) = expm(i π t / K_n A) e_000`), for thicknesses t₁ ≤ t₂ ≤ … from one starting vector.
//!
//! This is the documented alternative to dense expm matrices and batched eigensolvers on the
//! GPU: only the action on e₀ is needed, so each thickness step is a scaled, truncated Taylor
//! series of matrix–vector products (Al-Mohy & Higham, SIAM J. Sci. Comput. 33 (2011) 488):
//! the step Δt is cut into `s` substeps with ‖h·A‖₁ ≤ θ, each summing `m` Taylor terms. It
//! needs O(N²) memory and work per term instead of O(N³), works for absorptive (non-Hermitian)
//! matrices as they are, and is the same algorithm on the CPU (`taylor`, f64) and in WGSL
//! (`shaders/bloch/propagate.wgsl`, f32) — the twins of each other.

pub mod taylor;

pub use taylor::{norm1, propagate_taylor, TaylorPlan};
