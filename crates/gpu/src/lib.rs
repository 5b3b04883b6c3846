//! GPU plumbing shared by every domain: device acquisition on native (Vulkan/Metal/DX12)
//! and on the web (WebGPU), async readback that works in both, the shader registry, and the
//! compute boilerplate every kernel repeats ([`Kernel`], the buffer helpers on [`GpuContext`]).
//!
//! The caller chooses the device: nothing here falls back to the CPU. Every
//! operation that can fail on the GPU returns a [`GpuError`] rather than panicking.

mod buffers;
mod context;
mod error;
mod kernel;
mod readback;
pub mod shaders;

pub use context::{GpuContext, GpuOptions};
pub use error::GpuError;
pub use kernel::{workgroups, Kernel};
pub use readback::read_buffer;
pub use wgpu;

/// Maximum workgroups per dispatch dimension (WebGPU's guaranteed limit).
pub const MAX_WORKGROUPS_PER_DIM: u32 = 65_535;

/// Splits `n_groups` workgroups into an `(x, y)` grid that respects [`MAX_WORKGROUPS_PER_DIM`].
/// Kernels rebuild the flat index as `id.x + id.y * num_workgroups.x * workgroup_size`.
pub fn dispatch_grid(n_groups: u32) -> (u32, u32) {
    if n_groups <= MAX_WORKGROUPS_PER_DIM {
        (n_groups.max(1), 1)
    } else {
        (MAX_WORKGROUPS_PER_DIM, n_groups.div_ceil(MAX_WORKGROUPS_PER_DIM))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn dispatch_grid_covers_all_groups() {
        for n in [0u32, 1, 65_535, 65_536, 1_000_000] {
            let (x, y) = super::dispatch_grid(n);
            assert!(x <= super::MAX_WORKGROUPS_PER_DIM && y <= super::MAX_WORKGROUPS_PER_DIM);
            assert!(x as u64 * y as u64 >= n as u64);
        }
    }
}
