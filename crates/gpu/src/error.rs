//! Errors from the GPU layer, each in words a user can act on.

/// Everything that can go wrong acquiring or using a GPU device.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// No adapter matched the request (no GPU, no software Vulkan, or WebGPU disabled in the browser).
    #[error("no GPU adapter available ({0}); on Linux install mesa-vulkan-drivers, in a browser enable WebGPU")]
    NoAdapter(String),
    /// The adapter refused to create a device.
    #[error("GPU device request failed: {0}")]
    RequestDevice(String),
    /// wgpu reported a validation, out-of-memory or internal error for the named operation.
    #[error("GPU error in {operation}: {message}")]
    Device {
        /// What we were doing (`"refl/parratt.wgsl pipeline"`, `"dispatch"` ...).
        operation: String,
        /// wgpu's description.
        message: String,
    },
    /// A buffer would exceed the adapter's limits.
    #[error("{what} needs {needed} bytes but the adapter allows at most {limit}")]
    TooLarge {
        /// The buffer in question.
        what: String,
        /// Bytes requested.
        needed: u64,
        /// The adapter's limit.
        limit: u64,
    },
    /// Mapping a buffer for readback failed.
    #[error("GPU readback failed: {0}")]
    Readback(String),
    /// A shader path that is not in the registry.
    #[error("no shader {0:?} in the registry")]
    UnknownShader(String),
}
