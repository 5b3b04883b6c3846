//! `scatterlab stem info <master.h5> [--strict]`: what an acquisition holds — shapes, pixel
//! type, chunking, filters, calibration (or "not in file"), mask, data files with their frame
//! ranges, and missing data files. Exit 0 unless `--strict` and something is missing.

use std::fmt::Write as _;
use std::path::Path;

use scatterlab_stem::load::Acquisition;
use scatterlab_stem::reduce::{sample_probe, PROBE_SAMPLE_FRAMES};
use scatterlab_stem::sampling::detector_sampling;

/// Prints the summary of the acquisition at `path` (`scan`: a `ROWS,COLS` hint).
pub fn run(path: &Path, strict: bool, scan: Option<&str>) -> Result<(), String> {
    let (_, acq) = crate::stem_open::open(path, scan)?;
    print!("{}", render(&acq));
    if let Some(missing) = crate::stem_open::missing_summary(&acq) {
        eprintln!("scatterlab: {}: {missing}", acq.master());
    }
    let scan_missing = acq.scan_shape().is_err();
    if strict && (!acq.is_complete() || scan_missing) {
        let mut why = Vec::new();
        if !acq.is_complete() {
            why.push(format!("missing data files: {}", acq.missing().iter().map(|m| m.file.as_str()).collect::<Vec<_>>().join(", ")));
        }
        if scan_missing {
            why.push("no scan shape".to_string());
        }
        return Err(format!("--strict: {}", why.join("; ")));
    }
    Ok(())
}

fn opt(v: Option<f64>, unit: &str) -> String {
    v.map_or_else(|| "not in file".to_string(), |x| format!("{x} {unit}"))
}

fn pair(v: Option<[f64; 2]>, unit: &str) -> String {
    v.map_or_else(|| "not in file".to_string(), |[a, b]| format!("({a}, {b}) {unit} (row, col)"))
}

/// The text summary.
pub fn render(acq: &Acquisition) -> String {
    let mut o = String::new();
    let [dr, dc] = acq.det_shape();
    let layout = if acq.is_single_file() { "single file".to_string() } else { format!("Dectris master, {} data files", acq.parts().len()) };
    let _ = writeln!(o, "master: {} ({layout})", acq.master());
    let _ = writeln!(o, "frames: {} of {dr} × {dc} {} (shape [{}, {dr}, {dc}])", acq.n_frames(), acq.pixel_kind().name(), acq.n_frames());
    match acq.scan_shape() {
        Ok(s) => {
            let _ = writeln!(o, "scan: {} × {} (from {})", s.rows, s.cols, s.source);
        }
        Err(e) => {
            let _ = writeln!(o, "scan: not in file ({e})");
        }
    }
    if let Some(ds) = acq.parts().iter().find_map(|p| p.dataset()) {
        let chunking = match &ds.layout {
            scatterlab_hdf5::RawLayout::Chunked { dims, index, .. } => format!("chunked {dims:?} ({index:?} index)"),
            scatterlab_hdf5::RawLayout::Contiguous { .. } => "contiguous".to_string(),
            scatterlab_hdf5::RawLayout::Compact { .. } => "compact".to_string(),
        };
        let _ = writeln!(o, "storage: {chunking}");
        let filters: Vec<String> = ds.filters.iter().map(|f| format!("{} ({}){}", f.name, f.id, if f.supported { "" } else { " UNSUPPORTED" })).collect();
        let _ = writeln!(o, "filters: {}", if filters.is_empty() { "none".to_string() } else { filters.join(", ") });
    }
    let c = acq.calibration();
    let _ = writeln!(o, "calibration:");
    let _ = writeln!(o, "  wavelength: {}", opt(c.wavelength_a, "Å"));
    let _ = writeln!(o, "  voltage: {}", opt(c.voltage_kv, "kV"));
    let _ = writeln!(o, "  convergence semi-angle: {}", opt(c.convergence_mrad, "mrad"));
    let _ = writeln!(o, "  detector sampling: {}", sampling_line(acq));
    let _ = writeln!(o, "  scan step: {}", opt(c.scan_step_a, "Å"));
    let _ = writeln!(o, "  beam centre: {}", pair(c.beam_centre_rc, "px"));
    let _ = writeln!(o, "  pixel size: {}", pair(c.pixel_size_m, "m"));
    let _ = writeln!(o, "  detector distance: {}", opt(c.detector_distance_m, "m"));
    let _ = writeln!(o, "  count time: {}", opt(c.count_time_s, "s"));
    match acq.mask() {
        Some(m) => {
            let _ = writeln!(o, "mask: {} bad pixels of {} (non-zero pixel_mask; zeroed by default)", m.n_bad, dr * dc);
        }
        None => {
            let _ = writeln!(o, "mask: not in file");
        }
    }
    let _ = writeln!(o, "data files:");
    for p in acq.parts() {
        let state = p.size.map_or_else(|| "MISSING".to_string(), |s| format!("{s} bytes"));
        let _ = writeln!(o, "  {}  {}  frames {}..{}  {state}", p.link, p.file, p.first_frame, p.first_frame + p.n_frames);
    }
    if acq.n_missing_frames() > 0 {
        let _ = writeln!(o, "frames missing: {} of {}", acq.n_missing_frames(), acq.n_frames());
    }
    if acq.is_complete() {
        let _ = writeln!(o, "missing: none");
    } else {
        for m in acq.missing() {
            let frames = m.frames.map_or_else(|| "unknown frames".to_string(), |[a, b]| format!("frames {a}..{b}"));
            let _ = writeln!(o, "missing: {} (link {}, {frames})", m.file, m.link);
        }
    }
    for w in acq.warnings() {
        let _ = writeln!(o, "warning: {w}");
    }
    o
}

/// The detector sampling by the STEM crate's one rule, the BF disc measured on up to
/// [`PROBE_SAMPLE_FRAMES`] frames (the same value `stem reduce` records when that is every frame).
fn sampling_line(acq: &Acquisition) -> String {
    let probe = sample_probe(acq, PROBE_SAMPLE_FRAMES);
    let radius = probe.as_ref().ok().map(|(p, _)| p.radius);
    let Some(s) = detector_sampling(acq.calibration(), radius) else {
        return "not in file (needs the convergence semi-angle or the pixel size and detector distance)".into();
    };
    let sample = match &probe {
        Ok((_, n)) if s.source == scatterlab_stem::sampling::SamplingSource::SemiAngleOverDisc => format!("; disc measured on {n} frames"),
        _ => String::new(),
    };
    let mut line = format!("{:.4} mrad/px ({}{sample})", s.mrad_per_px, s.rule);
    if let Some(w) = &s.warning {
        line.push_str(&format!("\nwarning: {w}"));
    }
    line
}
