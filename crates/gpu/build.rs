//! Embeds every `shaders/**/*.wgsl` file into the binary at build time, so the registry
//! (`scatterlab_gpu::shaders::ALL`) always lists exactly the shaders in the repository.

// A build script reports failure by panicking: cargo shows the message and stops the build.
#![allow(clippy::expect_used)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            out.push(path);
        }
    }
}

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR"));
    let root = manifest.join("../../shaders");
    println!("cargo:rerun-if-changed={}", root.display());
    let mut files = Vec::new();
    collect(&root, &mut files);
    files.sort();
    let mut code = String::from("/// Every WGSL shader in `shaders/`, by path relative to that folder.\npub const ALL: &[Shader] = &[\n");
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
        let rel = file.strip_prefix(&root).expect("collected under root").to_string_lossy().replace('\\', "/");
        let abs = file.canonicalize().expect("shader path exists");
        writeln!(code, "    Shader {{ path: {rel:?}, source: include_str!({:?}) }},", abs.display().to_string()).expect("write to String");
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR")).join("shader_registry.rs");
    std::fs::write(out, code).expect("write shader registry");
}
