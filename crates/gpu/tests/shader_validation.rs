//! Every shader in `shaders/` parses and validates with naga (no GPU needed).

#[test]
fn every_shader_validates_with_naga() {
    assert!(!scatterlab_gpu::shaders::ALL.is_empty(), "the shader registry is empty");
    for shader in scatterlab_gpu::shaders::ALL {
        let module = naga::front::wgsl::parse_str(shader.source).unwrap_or_else(|e| panic!("{}: parse error\n{}", shader.path, e.emit_to_string(shader.source)));
        naga::valid::Validator::new(naga::valid::ValidationFlags::all(), naga::valid::Capabilities::empty())
            .validate(&module)
            .unwrap_or_else(|e| panic!("{}: validation error\n{}", shader.path, e.emit_to_string(shader.source)));
    }
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
