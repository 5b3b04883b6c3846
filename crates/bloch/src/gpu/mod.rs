//! The GPU twins of the Bloch CPU kernels, on a [`scatterlab_gpu::GpuContext`] (wgpu: Vulkan,
//! Metal, DX12 natively; WebGPU in the browser). f32 throughout (WGSL has no f64); the tests
//! compare them with the f64 CPU twins.

mod gradient;
mod propagate;
mod simulate;

pub use gradient::GradientGpu;
pub use propagate::{PropagateGpu, PropagationItem, MAX_GPU_BEAMS};
pub use simulate::{run_gpu, run_gpu_within, simulate_gpu, simulate_gpu_within, GPU_FLUX_TOLERANCE};
