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
