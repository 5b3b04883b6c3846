//! The registry of every WGSL shader in the repository's `shaders/` folder, embedded at build time.

/// One embedded WGSL file.
#[derive(Clone, Copy, Debug)]
pub struct Shader {
    /// Path relative to `shaders/`, e.g. `"refl/parratt.wgsl"`.
    pub path: &'static str,
    /// The WGSL source text.
    pub source: &'static str,
}

include!(concat!(env!("OUT_DIR"), "/shader_registry.rs"));

/// Looks a shader up by its path relative to `shaders/`.
pub fn get(path: &str) -> Result<&'static Shader, crate::GpuError> {
    ALL.iter().find(|s| s.path == path).ok_or_else(|| crate::GpuError::UnknownShader(path.to_owned()))
}
