//! The GPU twins of [`crate::reduce`]'s kernels, on a [`scatterlab_gpu::GpuContext`] (wgpu:
//! Vulkan/Metal/DX12 natively, WebGPU in the browser). Each implements the same contract as its
//! CPU reference and returns the same result type; tests compare them byte for byte (SSB's f32
//! reconstruction, [`SsbGpu`], within stated tolerances of the f64 CPU).

mod display;
mod fused;
mod resident;
mod ssb;

pub use display::DisplayGpu;
pub use fused::FusedPassGpu;
pub use resident::ResidentGpu;
#[cfg(not(target_arch = "wasm32"))]
pub use ssb::GpuLosses;
pub use ssb::{ssb_gpu, PhaseVarianceGpu, SsbGpu, SsbGpuProducts, DEFAULT_WORK_BYTES, MAX_AXIS};
