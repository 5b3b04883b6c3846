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

/// The header lines `// requires: <path>` of `source`: library files (relative to `shaders/`) that
/// the shader uses and that are prepended, in order, when it is compiled.
pub fn requires(source: &str) -> Vec<&str> {
    source.lines().take_while(|l| l.trim_start().starts_with("//")).filter_map(|l| l.trim_start().trim_start_matches('/').trim().strip_prefix("requires:")).map(str::trim).collect()
}

/// The compilable text of a registry shader: its `// requires:` libraries (one level, in order)
/// followed by the shader itself. A shader without requirements is returned unchanged.
pub fn resolved_source(path: &str) -> Result<std::borrow::Cow<'static, str>, crate::GpuError> {
    let shader = get(path)?;
    let libs = requires(shader.source);
    if libs.is_empty() {
        return Ok(std::borrow::Cow::Borrowed(shader.source));
    }
    let mut text = String::new();
    for lib in libs {
        text.push_str(get(lib)?.source);
        text.push('\n');
    }
    text.push_str(shader.source);
    Ok(std::borrow::Cow::Owned(text))
}
