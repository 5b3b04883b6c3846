//! The GPU pipeline a command runs on when the user asks for `--device gpu` (none for `cpu`).

use scatterlab_core::DeviceKind;
use scatterlab_refl::gpu::ParrattGpu;
use scatterlab_refl::Engine;

/// The arithmetic of the reflectivity kernel on `--device gpu` (`--precision`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum GpuPrecision {
    /// f32: the uniaxial recursion's fast kernel (≤ 2e-3 of f64); tilted/biaxial models still
    /// run the 4×4 kernel in df64, the only precision it has.
    #[default]
    F32,
    /// Double-float (df64) for every model: uniaxial stacks through the 4×4 kernel as tensor
    /// layers, within 1e-6·R of the CPU's f64.
    Df64,
}

/// The engine for `gpu` at `precision` (the CPU's f64 without a GPU). `--precision df64` with
/// `--device cpu` is an error rather than a flag silently ignored.
pub fn reflectivity_engine(gpu: Option<&ParrattGpu>, precision: GpuPrecision) -> Result<Engine<'_>, String> {
    match (gpu, precision) {
        (None, GpuPrecision::F32) => Ok(Engine::Cpu),
        (None, GpuPrecision::Df64) => Err("--precision df64 needs --device gpu (the CPU computes in f64)".to_owned()),
        (Some(p), GpuPrecision::F32) => Ok(Engine::Gpu(p)),
        (Some(p), GpuPrecision::Df64) => Ok(Engine::GpuDf64(p)),
    }
}

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
    private_runtime_dir();
    pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default())).map_err(|e| format!("no GPU for --device gpu: {e}"))
}

/// Mesa's Vulkan loaders print "XDG_RUNTIME_DIR is invalid or not set" on a plain shell (cron,
/// ssh, containers): point it at a private folder of ours when it is unset or not a folder.
fn private_runtime_dir() {
    let valid = std::env::var_os("XDG_RUNTIME_DIR").is_some_and(|d| std::path::Path::new(&d).is_dir());
    if valid {
        return;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, MetadataExt};
        let uid = std::fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
        let dir = std::env::temp_dir().join(format!("scatterlab-xdg-{uid}"));
        if std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&dir).is_ok() {
            // Before any thread of wgpu's exists (this runs before the adapter is requested).
            std::env::set_var("XDG_RUNTIME_DIR", &dir);
        }
    }
}
