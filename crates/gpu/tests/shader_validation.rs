//! Every shader in `shaders/` parses and validates with naga (no GPU needed).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

#[test]
fn every_shader_validates_with_naga() {
    assert!(!scatterlab_gpu::shaders::ALL.is_empty(), "the shader registry is empty");
    for shader in scatterlab_gpu::shaders::ALL {
        // As compiled: with the libraries its `// requires:` lines name prepended.
        let source = scatterlab_gpu::shaders::resolved_source(shader.path).unwrap_or_else(|e| panic!("{}: {e}", shader.path));
        let module = naga::front::wgsl::parse_str(&source).unwrap_or_else(|e| panic!("{}: parse error\n{}", shader.path, e.emit_to_string(&source)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: validation error\n{}", shader.path, e.emit_to_string(&source)));
    }
}

/// A library named by `// requires:` exists in the registry (the df64 kernels use one).
#[test]
fn required_libraries_exist() {
    for shader in scatterlab_gpu::shaders::ALL {
        for lib in scatterlab_gpu::shaders::requires(shader.source) {
            assert!(scatterlab_gpu::shaders::get(lib).is_ok(), "{}: requires {lib}, which is not in the registry", shader.path);
        }
    }
    let general = scatterlab_gpu::shaders::get("refl/general_df64.wgsl").expect("the 4×4 df64 kernel is registered");
    assert_eq!(scatterlab_gpu::shaders::requires(general.source), ["refl/df64.wgsl"]);
}

#[test]
fn registry_names_match_files() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shaders");
    for shader in scatterlab_gpu::shaders::ALL {
        let on_disk = std::fs::read_to_string(root.join(shader.path)).expect("registered shader exists on disk");
        assert_eq!(on_disk, shader.source, "{} is stale in the registry", shader.path);
    }
}

/// The comment lines that open `source` (the shader's header).
fn header(source: &str) -> String {
    source.lines().take_while(|l| l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n")
}

/// Every `crates/….rs` path named in `text` (backticks, commas and parentheses stripped).
fn named_rust_files(text: &str) -> Vec<String> {
    text.split(|c: char| c.is_whitespace() || "`,;()".contains(c))
        .map(|t| t.trim_end_matches(['.', ':']))
        .filter(|t| t.starts_with("crates/") && t.ends_with(".rs"))
        .map(str::to_owned)
        .collect()
}

/// House rule: every WGSL kernel has a CPU twin, named in its header, and the name stays true
/// when files move (one header once named a file that no longer existed).
#[test]
fn every_shader_header_names_an_existing_cpu_twin() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for shader in scatterlab_gpu::shaders::ALL {
        let head = header(shader.source);
        assert!(head.to_lowercase().contains("twin"), "{}: the header does not name its CPU twin", shader.path);
        let files = named_rust_files(&head);
        assert!(!files.is_empty(), "{}: the header names no crates/….rs file", shader.path);
        for f in files {
            assert!(root.join(&f).is_file(), "{}: the header names {f}, which does not exist", shader.path);
        }
    }
}
