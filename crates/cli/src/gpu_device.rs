//! The GPU pipeline a command runs on when the user asks for `--device gpu` (none for `cpu`).

use scatterlab_core::DeviceKind;
use scatterlab_refl::gpu::ParrattGpu;

/// Acquires the adapter and builds the reflectivity pipeline for `gpu`; `None` for `cpu`.
/// Failure is an error: the CLI never falls back to the CPU.
pub fn reflectivity_pipeline(device: DeviceKind) -> Result<Option<ParrattGpu>, String> {
    match device {
        DeviceKind::Cpu => Ok(None),
        DeviceKind::Gpu => {
            let ctx = context()?;
            Ok(Some(pollster::block_on(ParrattGpu::new(&ctx)).map_err(|e| e.to_string())?))
        }
    }
}

/// Acquires the default adapter's device (for domains that build their own pipelines).
/// Failure is an error: the CLI never falls back to the CPU.
pub fn context() -> Result<scatterlab_gpu::GpuContext, String> {
    pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default())).map_err(|e| format!("no GPU for --device gpu: {e}"))
}
