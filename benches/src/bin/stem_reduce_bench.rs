//! The 4D-STEM fused pass (issue 6) on the dev_medium fixture: 16,384 frames of 96 × 96 u16
//! (302 MB), loaded and decoded into memory once (bad pixels zeroed), then one thread, best and
//! median of 5 runs after a warm-up, GB/s of raw u16 (10⁹ bytes of pixels per second) for
//! - `bandwidth`: the machine's measured bandwidth for these bytes, a plain u64 sum over the
//!   same u16 buffer (the yardstick; goal: the fused pass ≥ 70 % of it);
//! - `fused pass (CPU)`: [`FusedPass`] with the standard 4 detectors (BF/ABF/ADF/DF at the
//!   fixture geometry of `dev_medium_params.json`): detectors, total, CoM, sum/max patterns;
//! - `fused pass (GPU)`: [`FusedPassGpu`] on the default adapter (lavapipe here, which uses its
//!   own threads), including the upload of every batch and the read-back; must equal the CPU's.
//!
//! The peers, in the same run, on the same data decoded by h5py + hdf5plugin (only the reduction
//! is timed): numpy (`python/stem_reduce_numpy.py`, tensordot against the same masks) through
//! `SCATTERLAB_BENCH_PYTHON` (default `~/.cache/scatterlab/bench-venv/bin/python`), and py4DSTEM
//! through `SCATTERLAB_PY4DSTEM_PYTHON` (default `~/.cache/scatterlab/py4dstem-venv/bin/python`,
//! Python 3.11 with numpy < 2). Their integer products must equal ours. "-" where a peer cannot
//! run (or the GPU row with `SCATTERLAB_SKIP_GPU=1`). Last line: one JSON object with the GB/s figures.
//!
//! `cargo run --release -p scatterlab-benches --bin stem_reduce_bench [fixture dir]`
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use std::path::{Path, PathBuf};
use std::time::Instant;

use scatterlab_gpu::GpuContext;
use scatterlab_stem::gpu::FusedPassGpu;
use scatterlab_stem::load::{Acquisition, DirFileSet, Hints, MaskPolicy, PixelData, PixelSlice};
use scatterlab_stem::reduce::{FusedPass, FusedResult, VirtualDetector};
use serde_json::{json, Value};

const REPS: usize = 5;
const PREFIX: &str = "dev_medium";
/// Frames per GPU batch (36 MB of u16), well inside the storage-buffer binding limit.
const GPU_BATCH: usize = 2048;

/// Best and median seconds of `REPS` runs of `f` after one warm-up run, whose result is returned.
fn best_median<R>(mut f: impl FnMut() -> R) -> (f64, f64, R) {
    let first = f();
    let mut t = Vec::with_capacity(REPS);
    for _ in 0..REPS {
        let t0 = Instant::now();
        std::hint::black_box(f());
        t.push(t0.elapsed().as_secs_f64());
    }
    t.sort_by(f64::total_cmp);
    (t[0], t[REPS / 2], first)
}

fn num(v: &Value) -> f64 {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok())).unwrap_or_else(|| panic!("not a number: {v}"))
}

/// The fixture's four detectors (BF/ABF/ADF/DF), as the reference tests build them.
fn detectors(params: &Value) -> Vec<VirtualDetector> {
    let vd = &params["references"]["virtual_detectors"];
    ["bf", "abf", "adf", "df"]
        .iter()
        .map(|&name| {
            let d = &vd[name];
            let c = [num(&d["center_row_col"][0]), num(&d["center_row_col"][1])];
            VirtualDetector::annulus(name, c, num(&d["inner_px"]), num(&d["outer_px"]))
        })
        .collect()
}

fn fused(det: [usize; 2], n: usize, dets: &[VirtualDetector], data: &[u16]) -> FusedResult {
    let mut pass = FusedPass::new(det, n, dets).expect("fused pass");
    pass.add(0, PixelSlice::U16(data)).expect("frames add");
    pass.finish()
}

fn fused_gpu(ctx: &GpuContext, det: [usize; 2], n: usize, dets: &[VirtualDetector], data: &[u16]) -> FusedResult {
    pollster::block_on(async {
        let mut pass = FusedPassGpu::new(ctx, det, n, dets).await.expect("GPU fused pass");
        for (i, batch) in data.chunks(GPU_BATCH * det[0] * det[1]).enumerate() {
            pass.add((i * GPU_BATCH) as u64, PixelSlice::U16(batch)).await.expect("GPU batch");
        }
        pass.finish().await.expect("GPU read-back")
    })
}

/// Runs the peer script with `python` in `mode`; its JSON, or None (the reason printed).
fn peer(python: &str, config: &Path, mode: &str) -> Option<Value> {
    let script = format!("{}/python/stem_reduce_numpy.py", env!("CARGO_MANIFEST_DIR"));
    let out = match std::process::Command::new(python).arg(script).arg(config).arg(REPS.to_string()).arg(mode).output() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("{mode} peer not run: {python}: {e}");
            return None;
        }
    };
    if !out.status.success() {
        eprintln!("{mode} peer not run: {}", String::from_utf8_lossy(&out.stderr).lines().last().unwrap_or(""));
        return None;
    }
    serde_json::from_slice(&out.stdout).ok()
}

/// Whether the peer's checksums equal ours (integers exactly, CoM to 1e-3 px per frame on average).
fn agrees(p: &Value, r: &FusedResult) -> bool {
    let c = &p["check"];
    let ints = |v: &Value| v.as_array().map(|a| a.iter().filter_map(Value::as_u64).collect::<Vec<_>>());
    let dets = r.detectors.iter().all(|(name, _, v)| c["detectors"][name].as_u64() == Some(v.iter().sum()));
    let total = c["total"].is_null() || c["total"].as_u64() == Some(r.total.iter().sum());
    let pats = ints(&c["sum_dp"]).as_ref() == Some(&r.sum_dp) && ints(&c["max_dp"]).as_ref() == Some(&r.max_dp);
    let com = (0..2).all(|a| (num(&c["com_sum"][a]) - r.com_raw[a].iter().sum::<f64>()).abs() <= 1e-3 * r.n_frames as f64);
    dets && total && pats && com
}

fn main() {
    let dir = PathBuf::from(std::env::args().nth(1).unwrap_or_else(|| concat!(env!("CARGO_MANIFEST_DIR"), "/../../shared/fixtures/stem").into()));
    let params: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(format!("{PREFIX}_params.json"))).expect("params")).expect("params JSON");
    let t0 = Instant::now();
    let acq = Acquisition::open(&DirFileSet::new(&dir), &format!("{PREFIX}_master.h5"), &Hints::default()).expect("fixture opens");
    let (det, n) = (acq.det_shape(), acq.n_frames() as usize);
    let (mut pixels, mut bytes) = (PixelData::U16(Vec::new()), Vec::new());
    acq.read_frames_into(0, n, MaskPolicy::ZeroMasked, &mut pixels, &mut bytes).expect("frames read");
    drop(bytes);
    let PixelData::U16(data) = pixels else { panic!("{PREFIX} is not u16") };
    let raw = (data.len() * 2) as f64;
    println!(
        "{PREFIX}: {n} frames of {}×{} u16, {:.1} MB decoded into memory in {:.2} s; one thread, best/median of {REPS}",
        det[0],
        det[1],
        raw / 1e6,
        t0.elapsed().as_secs_f64()
    );
    let dets = detectors(&params);

    let bw = best_median(|| data.iter().map(|&v| u64::from(v)).sum::<u64>());
    let cpu = best_median(|| fused(det, n, &dets, &data));
    assert_eq!(cpu.2.total.iter().sum::<u64>(), bw.2, "fused total differs from the plain sum");
    let skip_gpu = std::env::var("SCATTERLAB_SKIP_GPU").is_ok_and(|v| v == "1");
    let gpu = match if skip_gpu { Err("SCATTERLAB_SKIP_GPU=1".to_owned()) } else { pollster::block_on(GpuContext::new(&Default::default())).map_err(|e| e.to_string()) } {
        Ok(ctx) => {
            let r = best_median(|| fused_gpu(&ctx, det, n, &dets, &data));
            assert!(r.2 == cpu.2, "GPU and CPU fused passes differ");
            Some((format!("{} ({:?}, {:?})", ctx.adapter_info.name, ctx.adapter_info.backend, ctx.adapter_info.device_type), r.0, r.1))
        }
        Err(e) => {
            eprintln!("GPU row skipped: {e}");
            None
        }
    };

    // The peers get the same masks and bad pixels, so every integer product must agree.
    let mut masks = serde_json::Map::new();
    for d in &dets {
        let runs = d.runs(det).expect("runs");
        let idx: Vec<usize> = runs.runs.iter().flat_map(|(r, cols)| cols.clone().map(move |c| r * det[1] + c)).collect();
        masks.insert(d.name.clone(), idx.into());
    }
    let bad: Vec<usize> = acq.mask().map(|m| m.bad.iter().enumerate().filter(|(_, &b)| b).map(|(i, _)| i).collect()).unwrap_or_default();
    let scan = acq.scan_shape().expect("scan shape");
    let files: Vec<String> = (1..).map(|k| dir.join(format!("{PREFIX}_data_{k:06}.h5"))).take_while(|p| p.is_file()).map(|p| p.display().to_string()).collect();
    let config = std::env::temp_dir().join(format!("stem_reduce_bench_{}.json", std::process::id()));
    let cfg = json!({ "files": files, "det": det, "scan": [scan.rows, scan.cols], "bad": bad, "masks": masks });
    std::fs::write(&config, cfg.to_string()).expect("peer config written");
    let home = std::env::var("HOME").unwrap_or_default();
    let py = |var: &str, venv: &str| std::env::var(var).unwrap_or_else(|_| format!("{home}/.cache/scatterlab/{venv}/bin/python"));
    let np = peer(&py("SCATTERLAB_BENCH_PYTHON", "bench-venv"), &config, "numpy");
    let p4 = peer(&py("SCATTERLAB_PY4DSTEM_PYTHON", "py4dstem-venv"), &config, "py4dstem");
    let _ = std::fs::remove_file(&config);
    for (name, p, version) in [("numpy", &np, "numpy"), ("py4DSTEM", &p4, "py4dstem")] {
        if let Some(p) = p {
            println!("{name} {} (numpy {}): products {}", p[version], p["numpy"], if agrees(p, &cpu.2) { "agree" } else { "DIFFER" });
        }
    }

    let gbs = |s: f64| raw / s / 1e9;
    let peer_t = |p: &Option<Value>| p.as_ref().and_then(|p| Some((p["time"]["best"].as_f64()?, p["time"]["median"].as_f64()?)));
    println!("{:<44} | {:>9} {:>8} | {:>12}", "path", "best GB/s", "median", "of bandwidth");
    let row = |name: &str, t: Option<(f64, f64)>| {
        let cell = |v: Option<f64>| v.map_or("-".to_owned(), |s| format!("{:.3}", gbs(s)));
        let pct = t.map_or("-".to_owned(), |t| format!("{:.0} %", 100.0 * bw.0 / t.0));
        println!("{name:<44} | {:>9} {:>8} | {pct:>12}", cell(t.map(|t| t.0)), cell(t.map(|t| t.1)));
    };
    row("bandwidth: plain u64 sum of the u16 buffer", Some((bw.0, bw.1)));
    row("ours fused pass (CPU, 4 detectors)", Some((cpu.0, cpu.1)));
    let gpu_name = gpu.as_ref().map_or("GPU".to_owned(), |g| g.0.clone());
    row(&format!("ours fused pass GPU incl. upload: {gpu_name}"), gpu.as_ref().map(|g| (g.1, g.2)));
    row("numpy (tensordot float64, sum/max)", peer_t(&np));
    row("py4DSTEM (virtual images, dp mean/max, CoM)", peer_t(&p4));
    let pct = 100.0 * bw.0 / cpu.0;
    println!("fused pass: {:.3} GB/s = {pct:.0} % of the measured {:.3} GB/s (goal ≥ 70 %: {})", gbs(cpu.0), gbs(bw.0), if pct >= 70.0 { "met" } else { "NOT met" });
    let js = |t: Option<(f64, f64)>| t.map_or(Value::Null, |t| gbs(t.0).into());
    println!(
        "{}",
        json!({ "stem_reduce_gbs": {
            "bandwidth": gbs(bw.0), "fused_cpu": gbs(cpu.0), "fused_gpu": js(gpu.as_ref().map(|g| (g.1, g.2))),
            "numpy": js(peer_t(&np)), "py4dstem": js(peer_t(&p4)), "fused_pct_of_bandwidth": pct,
        }})
    );
}
