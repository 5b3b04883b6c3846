//! The GPU twins of [`crate::reduce`]'s kernels, on a [`scatterlab_gpu::GpuContext`] (wgpu:
//! Vulkan/Metal/DX12 natively, WebGPU in the browser). Each implements the same contract as its
//! CPU reference and returns the same result type; tests compare them byte for byte.

mod display;
mod fused;
mod resident;

pub use display::DisplayGpu;
pub use fused::FusedPassGpu;
pub use resident::ResidentGpu;
