//! Buffer creation as the kernels use it: storage and uniform buffers filled from `Pod` data,
//! zeroed storage buffers of a given size, and command encoders — one call each instead of a
//! descriptor per buffer at every call site.

use wgpu::util::DeviceExt;

use crate::GpuContext;

impl GpuContext {
    /// A `STORAGE` buffer holding `data` (read-only for the kernels; callers check its size
    /// against the limits with [`GpuContext::check_storage_size`] first).
    pub fn storage_from<T: bytemuck::Pod>(&self, label: &str, data: &[T]) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: bytemuck::cast_slice(data), usage: wgpu::BufferUsages::STORAGE })
    }

    /// A `UNIFORM` buffer holding `value` (a kernel's parameter block).
    pub fn uniform_from<T: bytemuck::Pod>(&self, label: &str, value: &T) -> wgpu::Buffer {
        self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor { label: Some(label), contents: bytemuck::bytes_of(value), usage: wgpu::BufferUsages::UNIFORM })
    }

    /// A zeroed `STORAGE | extra` buffer of `bytes` bytes (outputs, accumulators, work space):
    /// `extra` adds `COPY_SRC` for a buffer that is read back, `COPY_DST` for one that is written.
    pub fn storage(&self, label: &str, bytes: u64, extra: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor { label: Some(label), size: bytes, usage: wgpu::BufferUsages::STORAGE | extra, mapped_at_creation: false })
    }

    /// A new command encoder.
    pub fn encoder(&self, label: &str) -> wgpu::CommandEncoder {
        self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some(label) })
    }
}
