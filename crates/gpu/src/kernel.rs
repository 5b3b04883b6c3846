//! [`Kernel`]: one compute entry point of a registry shader, compiled once, with the steps every
//! dispatch repeats (bind group from buffers, compute pass, [`dispatch_grid`](crate::dispatch_grid))
//! — so that a domain's call site keeps only which buffers, how many workgroups and what to read.
//!
//! The bind group layout is the one the shader declares (wgpu's automatic layout): an entry point
//! whose layout holds only the bindings it uses binds only those ([`Kernel::bind_at`]).

use crate::{GpuContext, GpuError};

/// A compiled compute pipeline (one shader entry point) and its bind group layout 0.
#[derive(Clone, Debug)]
pub struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    /// `"<shader path> <entry point>"`: the label of its bind groups and passes, and of its errors.
    label: String,
    /// The device's workgroups per dispatch dimension, read once at compile time.
    max_per_dim: u32,
}

/// Workgroups of `size` threads that cover `threads` threads (at least one thread each), saturating
/// at `u32::MAX` (then [`Kernel::dispatch`] refuses the grid with a typed error).
pub fn workgroups(threads: usize, size: u32) -> u32 {
    u32::try_from((threads as u64).div_ceil(u64::from(size.max(1)))).unwrap_or(u32::MAX)
}

impl Kernel {
    /// Compiles `entry_point` of the registry shader `shader_path` on `ctx`'s device (libraries
    /// named by `// requires:` prepended, see [`GpuContext::compute_pipeline`]).
    pub async fn new(ctx: &GpuContext, shader_path: &str, entry_point: &str) -> Result<Self, GpuError> {
        let pipeline = ctx.compute_pipeline(shader_path, entry_point).await?;
        Ok(Self::from_pipeline(ctx, pipeline, format!("{shader_path} {entry_point}")))
    }

    /// Compiles `entry_point` of WGSL text that is not in the registry (the GPU layer's own tests;
    /// every domain kernel lives in the registry, with its CPU twin named in its header).
    pub async fn from_wgsl(ctx: &GpuContext, label: &str, source: &str, entry_point: &str) -> Result<Self, GpuError> {
        let pipeline = ctx.pipeline_from_wgsl(label, std::borrow::Cow::Borrowed(source), entry_point).await?;
        Ok(Self::from_pipeline(ctx, pipeline, format!("{label} {entry_point}")))
    }

    fn from_pipeline(ctx: &GpuContext, pipeline: wgpu::ComputePipeline, label: String) -> Self {
        let layout = pipeline.get_bind_group_layout(0);
        Kernel { pipeline, layout, label, max_per_dim: ctx.limits.max_compute_workgroups_per_dimension }
    }

    /// The compiled pipeline (for encoders that set it themselves).
    pub fn pipeline(&self) -> &wgpu::ComputePipeline {
        &self.pipeline
    }

    /// `"<shader path> <entry point>"`.
    pub fn label(&self) -> &str {
        &self.label
    }

    /// A bind group with `buffers[i]` at binding `i` (whole buffers), for kernels that use every
    /// binding 0..n in order.
    pub fn bind(&self, ctx: &GpuContext, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers.iter().enumerate().map(|(i, b)| wgpu::BindGroupEntry { binding: i as u32, resource: b.as_entire_binding() }).collect();
        self.bind_entries(ctx, &entries)
    }

    /// A bind group with each `(binding, buffer)` pair (whole buffers), for entry points that use
    /// only some bindings of their shader.
    pub fn bind_at(&self, ctx: &GpuContext, buffers: &[(u32, &wgpu::Buffer)]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry<'_>> = buffers.iter().map(|(i, b)| wgpu::BindGroupEntry { binding: *i, resource: b.as_entire_binding() }).collect();
        self.bind_entries(ctx, &entries)
    }

    fn bind_entries(&self, ctx: &GpuContext, entries: &[wgpu::BindGroupEntry<'_>]) -> wgpu::BindGroup {
        ctx.device.create_bind_group(&wgpu::BindGroupDescriptor { label: Some(&self.label), layout: &self.layout, entries })
    }

    /// Encodes one compute pass running this kernel over `n_groups` workgroups with `bind_group` at
    /// group 0, laid out by [`dispatch_grid`](crate::dispatch_grid) (the shader rebuilds the flat
    /// index from `num_workgroups.x`). A grid beyond the device's workgroups per dimension is a
    /// typed error here, not a validation failure at submission.
    pub fn dispatch(&self, encoder: &mut wgpu::CommandEncoder, bind_group: &wgpu::BindGroup, n_groups: u32) -> Result<(), GpuError> {
        let (x, y) = crate::dispatch_grid(n_groups);
        if x.max(y) > self.max_per_dim {
            return Err(GpuError::Device {
                operation: format!("{} dispatch", self.label),
                message: format!("{n_groups} workgroups need a {x}×{y} grid; the device allows {} per dimension", self.max_per_dim),
            });
        }
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor { label: Some(&self.label), timestamp_writes: None });
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, bind_group, &[]);
        pass.dispatch_workgroups(x, y, 1);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn workgroups_cover_every_thread_and_saturate() {
        assert_eq!(super::workgroups(0, 64), 0);
        assert_eq!(super::workgroups(1, 64), 1);
        assert_eq!(super::workgroups(64, 64), 1);
        assert_eq!(super::workgroups(65, 64), 2);
        assert_eq!(super::workgroups(1000, 1), 1000);
        assert_eq!(super::workgroups(7, 0), 7, "a zero workgroup size counts as one thread per group");
        assert_eq!(super::workgroups(usize::MAX, 1), u32::MAX);
    }
}
