//! Browser test of the 4D-STEM WGSL kernels on the browser's software WebGPU adapter
//! (headless Chromium, SwiftShader), run by `scripts/test-browser.sh`: the whole `reduce`
//! pipeline on `dev_small` (bitshuffle+LZ4, three data files, in memory) with the fused pass on
//! WebGPU against the same pipeline on the CPU in the same wasm — integer products identical,
//! centre of mass ≤ 1e-4 px, iDPC ≤ 1e-4 of its range — and the BF image equal to the fixture's
//! reference; the fused pass on fresh random u16 frames; the display shader (every colormap and
//! the colour wheel) against its CPU twin; SSB ptychography with the reconstruction on WebGPU
//! (`ssb_gpu`, f32) against the fixture's `ssb_object` (relative L2 ≤ 1e-3, the issue's GPU gate).
#![cfg(target_arch = "wasm32")]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use scatterlab_core::CancelToken;
use scatterlab_hdf5::storage::bytes;
use scatterlab_hdf5::values::dataset_numbers;
use scatterlab_hdf5::H5File;
use scatterlab_stem::gpu::{DisplayGpu, FusedPassGpu};
use scatterlab_stem::load::{Acquisition, Hints, MapFileSet, PixelData};
use scatterlab_stem::reduce::colormap::{color_wheel, colorize, Colormap};
use scatterlab_stem::reduce::display::{normalise, Scale};
use scatterlab_stem::reduce::{reduce, DetectorShape, FusedPass, ReduceDevice, ReduceOptions, VirtualDetector};
use wasm_bindgen_test::*;

wasm_bindgen_test_configure!(run_in_browser);

macro_rules! fixture {
    ($name:literal) => {
        ($name, include_bytes!(concat!("../../../../shared/fixtures/stem/", $name)).as_slice())
    };
}

/// `dev_small` as the user would pick it: the master and its three data files.
const DEV_SMALL: [(&str, &[u8]); 4] =
    [fixture!("dev_small_master.h5"), fixture!("dev_small_data_000001.h5"), fixture!("dev_small_data_000002.h5"), fixture!("dev_small_data_000003.h5")];
const PARAMS: &str = include_str!("../../../../shared/fixtures/stem/dev_small_params.json");
const REFERENCE: &[u8] = include_bytes!("../../../../shared/fixtures/stem/dev_small_reference.h5");

/// Fixtures README / issue tolerances for the reals.
const COM_TOL_PX: f64 = 1e-4;
const IDPC_TOL_OF_RANGE: f64 = 1e-4;

async fn gpu() -> scatterlab_gpu::GpuContext {
    let ctx = scatterlab_gpu::GpuContext::new(&Default::default()).await.unwrap_or_else(|e| panic!("no WebGPU adapter: {e}"));
    console_log!("stem: WebGPU {}", ctx.describe());
    ctx
}

/// A small xorshift: `rand`'s OS entropy source is not wired up on wasm32 here.
struct XorShift(u64);
impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn seed() -> u64 {
    let s = js_sys::Date::now() as u64 | 1;
    console_log!("stem: seed {s}");
    s
}

#[wasm_bindgen_test]
async fn reduce_on_webgpu_equals_the_cpu_and_the_reference() {
    let mut files = MapFileSet::new();
    for (name, data) in DEV_SMALL {
        files.insert(name, bytes(data.to_vec()));
    }
    let acq = Acquisition::open(&files, "dev_small_master.h5", &Hints::default()).expect("dev_small opens");
    let ctx = gpu().await;
    // The fixture's BF detector (centre and radius), so `bf` can be compared with its reference.
    let params: serde_json::Value = serde_json::from_str(PARAMS).expect("params JSON");
    let bf = &params["references"]["virtual_detectors"]["bf"];
    let num = |v: &serde_json::Value| v.as_f64().expect("a number in dev_small_params.json");
    let center = [num(&bf["center_row_col"][0]), num(&bf["center_row_col"][1])];
    let opts = ReduceOptions { center: Some(center), bf_radius: Some(num(&bf["outer_px"])), bin: Some(2), ..Default::default() };
    let cancel = CancelToken::new();
    let cpu = reduce(&acq, &files, &opts, ReduceDevice::Cpu, &mut |_, _| {}, &cancel).await.expect("CPU reduce");
    let gpu = reduce(&acq, &files, &opts, ReduceDevice::Gpu(&ctx), &mut |_, _| {}, &cancel).await.expect("WebGPU reduce");
    console_log!("stem: devices {:?} / {:?}", cpu.record.device, gpu.record.device);
    assert_eq!(cpu.integers.len(), gpu.integers.len());
    for ((name, shape, c), (gname, gshape, g)) in cpu.integers.iter().zip(&gpu.integers) {
        assert_eq!((name, shape), (gname, gshape));
        assert!(c == g, "{name}: WebGPU and CPU integer products differ");
    }
    for ((name, _, c), (gname, _, g)) in cpu.reals.iter().zip(&gpu.reals) {
        assert_eq!(name, gname);
        let worst = c.iter().zip(g).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        let range = c.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v)) - c.iter().fold(f64::INFINITY, |m, &v| m.min(v));
        let tol = if name == "idpc" { IDPC_TOL_OF_RANGE * range } else { COM_TOL_PX };
        console_log!("stem: {name}: max |WebGPU − CPU| = {worst:.3e} (tolerance {tol:.1e})");
        assert!(worst <= tol, "{name}: {worst} > {tol}");
    }
    assert!(cpu.reals.iter().any(|(n, _, _)| n == "idpc"), "iDPC computed (dev_small is calibrated)");
    assert_eq!(cpu.record.rotation_deg, gpu.record.rotation_deg);
    assert_eq!(cpu.record.use_transpose, gpu.record.use_transpose);

    // The BF image against the fixture's reference.
    let reference = H5File::open(bytes(REFERENCE.to_vec()), "dev_small_reference.h5").expect("reference opens");
    let t = scatterlab_hdf5::tree(&reference, &Default::default());
    let path = t.nodes.iter().find(|n| n.path.rsplit('/').next() == Some("bf")).map(|n| n.path.clone()).expect("reference bf");
    let want = dataset_numbers(&reference, &path).expect("reference bf reads");
    let (_, _, bf) = gpu.integers.iter().find(|(n, _, _)| n == "bf").expect("bf product");
    let got: Vec<f64> = bf.iter().map(|&v| v as f64).collect();
    assert_eq!(got, want, "WebGPU bf differs from dev_small_reference.h5");
}

#[wasm_bindgen_test]
async fn fused_pass_on_random_frames_equals_the_cpu() {
    let ctx = gpu().await;
    let mut rng = XorShift(seed());
    for (det, n) in [([48usize, 40usize], 37usize), ([9, 13], 211)] {
        let px = det[0] * det[1];
        let data = PixelData::U16((0..n * px).map(|_| rng.next() as u16).collect());
        let c = [det[0] as f64 / 2.0 + 0.3, det[1] as f64 / 2.0 - 0.4];
        let r = det[0].min(det[1]) as f64 / 4.0;
        let mut dets = VirtualDetector::standard(c, r, [1.2 * r, 2.5 * r]);
        dets.push(VirtualDetector { name: "box".into(), shape: DetectorShape::Rect { rows: 1..det[0] - 1, cols: 2..det[1] - 3 } });
        let mask = (0..px).map(|_| rng.next().is_multiple_of(3)).collect();
        dets.push(VirtualDetector { name: "user".into(), shape: DetectorShape::Mask(mask) });
        let mut cpu = FusedPass::new(det, n, &dets).expect("cpu pass");
        let mut gpu = FusedPassGpu::new(&ctx, det, n, &dets).await.expect("gpu pass");
        cpu.add(0, data.as_slice()).expect("cpu add");
        gpu.add(0, data.as_slice()).await.expect("gpu add");
        let (c, g) = (cpu.finish(), gpu.finish().await.expect("gpu finish"));
        assert!(c == g, "random {det:?} × {n}: WebGPU and CPU fused passes differ");
    }
}

#[wasm_bindgen_test]
async fn display_shader_equals_the_cpu() {
    let ctx = gpu().await;
    let display = DisplayGpu::new(&ctx).await.expect("display pipeline");
    let mut rng = XorShift(seed());
    let values: Vec<f64> = (0..4096).map(|_| -10.0 + 120.0 * rng.unit()).collect();
    for map in Colormap::ALL {
        let c = colorize(&values, 0.0, 100.0, Scale::Linear, map).expect("cpu colorize");
        let g = display.colorize(&values, 0.0, 100.0, Scale::Linear, map).await.expect("gpu colorize");
        for ((v, a), b) in values.iter().zip(&c).zip(&g) {
            let x = normalise(*v, 0.0, 100.0) * 255.0;
            // f32 on the GPU: a value within 1e-5 of an interior bin edge may land either side.
            if x > 0.0 && x < 255.0 && (x - x.round()).abs() < 1e-5 {
                continue;
            }
            assert_eq!(a, b, "{}: value {v}", map.name());
        }
    }
    let r: Vec<f64> = (0..2000).map(|_| 4.0 * rng.unit() - 2.0).collect();
    let cc: Vec<f64> = (0..2000).map(|_| 4.0 * rng.unit() - 2.0).collect();
    let (c, g) = (color_wheel(&r, &cc, 1.5).expect("cpu wheel"), display.color_wheel(&r, &cc, 1.5).await.expect("gpu wheel"));
    let worst = c.iter().zip(&g).flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| x.abs_diff(*y))).max().unwrap_or(0);
    console_log!("stem: colour wheel worst channel difference {worst}");
    assert!(worst <= 1);
}

/// The reference's complex64 compound `{r, i}` at `path`, read from its raw members.
fn complex_dataset(file: &H5File, path: &str) -> Vec<num_complex::Complex64> {
    use hdf5_reader::messages::datatype::Datatype;
    let ds = file.reader().dataset(path).expect("reference dataset");
    let raw = ds.read_raw_bytes().expect("reference dataset reads");
    let Datatype::Compound { size, fields } = ds.dtype() else { panic!("{path}: not a compound type") };
    assert_eq!(*size, 8, "{path}: complex64 expected");
    let member = |name: &str| fields.iter().find(|f| f.name == name).map(|f| f.byte_offset as usize).expect("member r / i");
    let (re, im) = (member("r"), member("i"));
    let word = |e: &[u8], at: usize| f32::from_le_bytes([e[at], e[at + 1], e[at + 2], e[at + 3]]) as f64;
    raw.chunks_exact(8).map(|e| num_complex::Complex64::new(word(e, re), word(e, im))).collect()
}

#[wasm_bindgen_test]
async fn ssb_object_on_webgpu_equals_the_reference() {
    use scatterlab_stem::ssb::{Aberrations, SsbOptions};
    let mut files = MapFileSet::new();
    for (name, data) in DEV_SMALL {
        files.insert(name, bytes(data.to_vec()));
    }
    let acq = Acquisition::open(&files, "dev_small_master.h5", &Hints::default()).expect("dev_small opens");
    let ctx = gpu().await;
    // The reference's own geometry and aberrations (fixture README § SSB convention).
    let p: serde_json::Value = serde_json::from_str(PARAMS).expect("params JSON");
    let num = |v: &serde_json::Value| v.as_f64().expect("a number in dev_small_params.json");
    let s = &p["references"]["ssb"];
    let options = SsbOptions {
        center: Some([num(&s["center_row_col"][0]), num(&s["center_row_col"][1])]),
        bf_radius: Some(num(&s["bf_radius_px"])),
        rotation_deg: Some(num(&s["rotation_deg"])),
        transposed: Some(s["detector_transposed"].as_bool().expect("detector_transposed")),
        aberrations: Aberrations { c10_nm: num(&s["C10_nm"]), c12_nm: num(&s["C12_nm"]), phi12_rad: num(&s["phi12_rad"]) },
        dk_inv_a_per_px: Some(num(&p["detector_sampling_invA_per_px"])),
        scan_step_a: Some(num(&p["step_A"])),
        ..Default::default()
    };
    let got = scatterlab_stem::gpu::ssb_gpu(&ctx, &acq, &files, &options, &mut |_, _| {}, &CancelToken::new()).await.expect("WebGPU SSB");
    let reference = H5File::open(bytes(REFERENCE.to_vec()), "dev_small_reference.h5").expect("reference opens");
    let want = complex_dataset(&reference, "/ssb_object");
    assert_eq!(got.object.len(), want.len());
    let (num2, den2) = got.object.iter().zip(&want).fold((0.0, 0.0), |(n, d), (g, w)| {
        let g = num_complex::Complex64::new(g.re as f64, g.im as f64);
        (n + (g - w).norm_sqr(), d + w.norm_sqr())
    });
    let err = (num2 / den2).sqrt();
    console_log!("stem: WebGPU ssb_object relative L2 {err:.3e} on {} ({} BF pixels)", got.record.device, got.record.bf_pixels);
    assert!(err <= 1e-3, "relative L2 {err}");
    assert!(got.record.device.starts_with("gpu"), "{}", got.record.device);
}
