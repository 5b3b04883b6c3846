//! Opening an acquisition: a Dectris master with external links to `<prefix>_data_NNNNNN.h5`,
//! or one file holding `/entry/data/data` itself.
//!
//! Data files are found through the [`FileSet`] by the names the links store (same folder).
//! A missing data file does not fail the open: it is listed in [`Acquisition::missing`], its
//! frame range inferred from its neighbours, and reading a frame in it is an error naming it.

use scatterlab_hdf5::links::{links, LinkTarget};
use scatterlab_hdf5::raw::NumberKind;
use scatterlab_hdf5::values::attribute_numbers;
use scatterlab_hdf5::{open_raw, H5File, RawDataset, RawLayout};

use super::error::{LoadError, Result};
use super::fileset::FileSet;
use super::meta::{optional_numbers, read_calibration, read_mask, read_scan_shape, Hints, DETECTOR_SPECIFIC};
use super::pixels::PixelKind;
use super::Acquisition;

/// The frames dataset's path in data files and single files.
pub const DATA_PATH: &str = "/entry/data/data";
const DATA_GROUP: &str = "/entry/data";
/// Largest frame accepted: 256 MiB (an 8192 × 8192 u32 detector, 3.7× the largest Dectris
/// camera's frame, EIGER2 16M's 4148 × 4362 u32 = 72 MB); larger shapes are damage. It was 1 GiB
/// until the fuzz campaign forged a 120 kB acquisition whose three frame reads (fill-valued
/// chunks: no bytes stored) took 3.5 s and 1.7 GB; a frame read holds its bytes, its pixels and a
/// chunk buffer at once, and a wasm heap has 4 GiB in all.
pub const MAX_FRAME_BYTES: usize = 1 << 28;
/// Most frames an acquisition may declare (2³²: a 4096 × 4096 scan, far beyond any camera's;
/// a damaged `nimages` of 2⁶⁴ − 1 once overflowed every per-frame allocation).
pub const MAX_FRAMES: u64 = 1 << 32;

/// One source of frames: a data file (or the single file itself).
pub struct DataPart {
    /// The master's link name (`data_000001`), or `data` for a single file.
    pub link: String,
    /// The file name.
    pub file: String,
    /// First global frame index (0-based).
    pub first_frame: u64,
    /// Frames in it (inferred from the neighbours when missing).
    pub n_frames: u64,
    /// Its size in bytes (`None` when missing).
    pub size: Option<u64>,
    pub(super) source: Option<Present>,
}

/// An opened data file.
pub(super) struct Present {
    pub file: H5File,
    pub ds: RawDataset,
}

/// A data file the master links to that the file set lacks.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct MissingFile {
    /// The link name in the master.
    pub link: String,
    /// The file it names.
    pub file: String,
    /// The frames it would hold, `[first, end)` (inferred; `None` if it cannot be).
    pub frames: Option<[u64; 2]>,
}

impl DataPart {
    /// Whether the file is available.
    pub fn is_present(&self) -> bool {
        self.source.is_some()
    }

    /// The frames dataset (shape, type, chunking, filters) when the file is present.
    pub fn dataset(&self) -> Option<&RawDataset> {
        self.source.as_ref().map(|s| &s.ds)
    }
}

fn meta(file: &H5File, detail: String) -> LoadError {
    LoadError::Metadata { file: file.name().to_string(), detail }
}

pub(super) fn open(fs: &dyn FileSet, master: &str, hints: &Hints) -> Result<Acquisition> {
    let storage = fs.open(master)?.ok_or_else(|| LoadError::MissingFile { file: master.to_string(), needed_by: "open".into() })?;
    let master_size = storage.len();
    let block = fs.metadata_block_bytes();
    let file = H5File::open_with_block(storage.clone(), master, block)?;
    let mut warnings = Vec::new();
    let entries = links(&file, DATA_GROUP)?;
    let mut parts = Vec::new();
    let single = entries.iter().any(|l| l.name == "data" && matches!(l.target, LinkTarget::Hard { .. }));
    if single {
        let ds = open_raw(&file, DATA_PATH)?;
        let n = ds.shape.first().copied().unwrap_or(0);
        parts.push(DataPart { link: "data".into(), file: master.into(), first_frame: 0, n_frames: n, size: Some(master_size), source: None });
        let f2 = H5File::open_with_block(storage, master, block)?;
        parts[0].source = Some(Present { file: f2, ds });
    } else {
        for l in &entries {
            let LinkTarget::External { file: target, path } = &l.target else { continue };
            if !l.name.starts_with("data_") {
                continue;
            }
            let Some(st) = fs.open(target)? else {
                parts.push(DataPart { link: l.name.clone(), file: target.clone(), first_frame: 0, n_frames: 0, size: None, source: None });
                continue;
            };
            let size = st.len();
            let df = H5File::open_with_block(st, target.clone(), block)?;
            let ds = open_raw(&df, path)?;
            let n = ds.shape.first().copied().unwrap_or(0);
            let first = match attribute_numbers(&df, path, "image_nr_low") {
                Ok(v) if v.first().is_some_and(|&x| x >= 1.0) => {
                    let x = v.first().copied().unwrap_or(1.0);
                    let low = whole(x).ok_or_else(|| meta(&df, format!("{path}: image_nr_low = {x} is not a frame number")))?;
                    if let Ok(h) = attribute_numbers(&df, path, "image_nr_high") {
                        if let Some(&high) = h.first() {
                            if whole(high).and_then(|h| h.checked_add(1)) != low.checked_add(n) {
                                return Err(meta(&df, format!("{path}: image_nr_low..high = {low}..{high} but {n} frames stored")));
                            }
                        }
                    }
                    Some(low - 1)
                }
                _ => None,
            };
            // Without image_nr_low the file follows the previous one.
            let first = first.unwrap_or_else(|| parts.last().map_or(0, |p: &DataPart| p.first_frame + p.n_frames));
            if first.saturating_add(n) > MAX_FRAMES {
                return Err(meta(&df, format!("{path}: frames {first}..+{n} lie beyond the limit of {MAX_FRAMES} frames")));
            }
            parts.push(DataPart { link: l.name.clone(), file: target.clone(), first_frame: first, n_frames: n, size: Some(size), source: Some(Present { file: df, ds }) });
        }
        if parts.is_empty() {
            return Err(meta(&file, format!("{DATA_GROUP} has neither a data dataset nor data_NNNNNN external links")));
        }
    }
    let scan = read_scan_shape(&file, hints, &mut warnings);
    let images = |n: &str| optional_numbers(&file, &format!("{DETECTOR_SPECIFIC}/{n}")).ok().flatten().and_then(|v| v.first().copied());
    let declared = match (images("nimages"), images("ntrigger")) {
        (Some(n), t) if n >= 1.0 => whole(n * t.filter(|t| *t >= 1.0).unwrap_or(1.0)),
        _ => None,
    };
    let total = declared.or_else(|| scan.as_ref().map(|s| s.rows.saturating_mul(s.cols) as u64));
    let missing = infer_missing(&mut parts, total);
    let first = parts.iter().find_map(|p| p.source.as_ref()).ok_or_else(|| meta(&file, format!("none of the {} linked data files is available", parts.len())))?;
    let (det, kind, big_endian) = frame_geometry(&first.ds, &first.file)?;
    for p in &parts {
        if let Some(s) = &p.source {
            let (d, k, _) = frame_geometry(&s.ds, &s.file)?;
            if d != det || k != kind {
                return Err(meta(&s.file, format!("{DATA_PATH}: frames {}×{} {} differ from the first data file's {}×{} {}", d[0], d[1], k.name(), det[0], det[1], kind.name())));
            }
        }
    }
    check_overlaps(&parts, &file)?;
    let n_frames = parts.iter().map(|p| p.first_frame.saturating_add(p.n_frames)).max().unwrap_or(0).max(total.unwrap_or(0));
    if n_frames > MAX_FRAMES {
        return Err(meta(&file, format!("{n_frames} frames declared (nimages × ntrigger, scan shape or data files) exceed the limit of {MAX_FRAMES}")));
    }
    if let Some(s) = &scan {
        if s.rows.saturating_mul(s.cols) as u64 != n_frames {
            warnings.push(format!("{master}: scan shape {}×{} ({}) does not match {n_frames} frames", s.rows, s.cols, s.source));
        }
    }
    let calibration = read_calibration(&file, hints, &mut warnings);
    let mask = read_mask(&file, det)?;
    Ok(Acquisition {
        master: master.to_string(),
        master_size,
        single,
        parts,
        missing,
        det,
        kind,
        big_endian,
        n_frames,
        scan,
        calibration,
        mask,
        warnings,
        hashes: Default::default(),
    })
}

/// The 1-based file number of a `data_NNNNNN` link.
fn link_number(link: &str) -> Option<u64> {
    link.strip_prefix("data_")?.parse().ok().filter(|&k| k >= 1)
}

/// Frames per data file, from the present files: Dectris writes `nimages_per_file` frames to
/// every file but the last, so a present file that is not the last link holds exactly that
/// many, and file `k` starts at `(k − 1) · per_file`. `None` when the present files do not say
/// or disagree.
fn frames_per_file(parts: &[DataPart]) -> Option<u64> {
    let last = parts.iter().filter_map(|p| link_number(&p.link)).max()?;
    let mut seen = None;
    for p in parts.iter().filter(|p| p.is_present()) {
        let k = link_number(&p.link)?;
        let mut candidates = Vec::new();
        if k < last {
            candidates.push(p.n_frames);
        }
        if k > 1 && p.first_frame % (k - 1) == 0 {
            candidates.push(p.first_frame / (k - 1));
        }
        for c in candidates {
            match seen {
                None => seen = Some(c),
                Some(s) if s != c => return None,
                _ => {}
            }
        }
    }
    seen.filter(|&n| n > 0)
}

/// Gives missing parts their frames: from the file number and the frames per file
/// ([`frames_per_file`]) where the present files give it, else by splitting the gap between
/// their present neighbours (or up to `total`) evenly among consecutive missing files.
fn infer_missing(parts: &mut [DataPart], total: Option<u64>) -> Vec<MissingFile> {
    let per_file = frames_per_file(parts);
    let by_number = |p: &DataPart| -> Option<[u64; 2]> {
        let (k, n) = (link_number(&p.link)?, per_file?);
        let start = (k - 1).checked_mul(n)?;
        let end = k.checked_mul(n)?.min(total.unwrap_or(u64::MAX));
        let last = parts.iter().filter_map(|q| link_number(&q.link)).max() == Some(k);
        // The last file holds the rest: its end is only known from the declared total.
        let end = if last { total? } else { end };
        (end > start).then_some([start, end])
    };
    let mut frames: Vec<Option<[u64; 2]>> = parts.iter().map(|p| if p.is_present() { None } else { by_number(p) }).collect();
    // An inferred range that overlaps a present file means the numbering rule does not hold.
    let clash = frames.iter().flatten().any(|[s, e]| parts.iter().filter(|p| p.is_present()).any(|p| *s < p.first_frame + p.n_frames && p.first_frame < *e));
    if clash || frames.iter().zip(parts.iter()).any(|(f, p)| f.is_none() && !p.is_present()) {
        frames = neighbour_split(parts, total);
    }
    let mut out = Vec::new();
    for (p, f) in parts.iter_mut().zip(frames) {
        if p.is_present() {
            continue;
        }
        if let Some([s, e]) = f {
            p.first_frame = s;
            p.n_frames = e - s;
        }
        out.push(MissingFile { link: p.link.clone(), file: p.file.clone(), frames: f });
    }
    out
}

/// The fallback: each run of consecutive missing parts shares the gap between the present
/// parts around it (or up to `total`) evenly, in link order.
fn neighbour_split(parts: &[DataPart], total: Option<u64>) -> Vec<Option<[u64; 2]>> {
    let mut frames = vec![None; parts.len()];
    let mut i = 0;
    while i < parts.len() {
        if parts[i].is_present() {
            i += 1;
            continue;
        }
        let run_end = parts[i..].iter().position(DataPart::is_present).map_or(parts.len(), |o| i + o);
        let start = parts[..i].iter().rev().find(|p| p.is_present()).map_or(0, |p| p.first_frame + p.n_frames);
        let end = parts.get(run_end).map(|p| p.first_frame).or(total);
        if let Some(end) = end.filter(|&e| e >= start) {
            let m = (run_end - i) as u64;
            for (j, f) in frames[i..run_end].iter_mut().enumerate() {
                let j = j as u64;
                *f = Some([start + share(end - start, j, m), start + share(end - start, j + 1, m)]);
            }
        }
        i = run_end;
    }
    frames
}

/// `span · j / m` for j ≤ m (so at most `span`), in u128: a damaged declared total makes `span`
/// up to 2⁶⁴ − 1, whose product with j overflowed u64 (campaign 2026-12-05, `acquisition`).
fn share(span: u64, j: u64, m: u64) -> u64 {
    u64::try_from(u128::from(span) * u128::from(j) / u128::from(m.max(1))).unwrap_or(span)
}

fn check_overlaps(parts: &[DataPart], file: &H5File) -> Result<()> {
    let mut spans: Vec<(u64, u64, &str)> = parts.iter().filter(|p| p.n_frames > 0).map(|p| (p.first_frame, p.first_frame + p.n_frames, p.file.as_str())).collect();
    spans.sort_unstable();
    for w in spans.windows(2) {
        if let [a, b] = w {
            if b.0 < a.1 {
                return Err(meta(file, format!("{} (frames {}..{}) overlaps {} (frames {}..{})", a.2, a.0, a.1, b.2, b.0, b.1)));
            }
        }
    }
    Ok(())
}

/// Detector shape, pixel kind and byte order of a `(frames, rows, cols)` dataset.
fn frame_geometry(ds: &RawDataset, file: &H5File) -> Result<([usize; 2], PixelKind, bool)> {
    let unsupported = |what: String| LoadError::H5(scatterlab_hdf5::H5Error::UnsupportedFeature { file: file.name().into(), object: ds.path.clone(), feature: what });
    let [_, r, c] = ds.shape.as_slice() else {
        return Err(unsupported(format!("frames dataset of rank {} (expected 3: frames, rows, cols)", ds.shape.len())));
    };
    let kind = match (ds.dtype.kind, ds.dtype.size) {
        (NumberKind::Unsigned, 1) => PixelKind::U8,
        (NumberKind::Unsigned, 2) => PixelKind::U16,
        (NumberKind::Unsigned, 4) => PixelKind::U32,
        (k, s) => return Err(unsupported(format!("pixel type {k:?} of {s} bytes (expected unsigned 8, 16 or 32 bit)"))),
    };
    let det = [usize::try_from(*r).map_err(|_| unsupported("detector rows".into()))?, usize::try_from(*c).map_err(|_| unsupported("detector cols".into()))?];
    // A bound, so that every pixel count and frame size computed from `det` fits (a damaged
    // shape once overflowed `rows * cols`; tests/robust.rs).
    if det[0].checked_mul(det[1]).and_then(|p| p.checked_mul(kind.size())).is_none_or(|b| b > MAX_FRAME_BYTES) {
        return Err(unsupported(format!("detector frame of {r}×{c} {} pixels (over {MAX_FRAME_BYTES} bytes)", kind.name())));
    }
    // A chunk is decoded whole into one buffer: the same bound (the campaign forged a chunk of
    // thousands of small frames, ~2 GB, whose first read took 5 s and 2 GB).
    if let RawLayout::Chunked { dims, .. } = &ds.layout {
        if ds.chunk_bytes() > MAX_FRAME_BYTES as u64 {
            return Err(unsupported(format!("chunk of {dims:?} elements, {} bytes (over {MAX_FRAME_BYTES} bytes)", ds.chunk_bytes())));
        }
    }
    Ok((det, kind, ds.dtype.big_endian))
}

/// A count stored as a float in the metadata (Dectris writes them as numbers of any type), as a
/// u64 when it is a whole non-negative number; `None` otherwise. Beyond 2^53 it is the nearest
/// such integer and beyond u64::MAX it saturates: the frame limit refuses either, naming it.
fn whole(x: f64) -> Option<u64> {
    // Whole and non-negative: the conversion only rounds or saturates where the limit applies.
    #[allow(clippy::cast_possible_truncation)]
    (x.is_finite() && x >= 0.0 && x.fract() == 0.0).then_some(x as u64)
}
