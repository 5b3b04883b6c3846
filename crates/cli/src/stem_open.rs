//! Opening an acquisition for the `stem` commands, with the hints the user gave on the command
//! line (`--scan ROWS,COLS`).

use std::path::Path;

use scatterlab_stem::load::{Acquisition, DirFileSet, Hints};

/// Parses `--scan ROWS,COLS` (two positive integers).
pub fn parse_scan(text: &str) -> Result<[usize; 2], String> {
    let v: Vec<usize> =
        text.split(',').map(|s| s.trim().parse::<usize>()).collect::<Result<_, _>>().map_err(|_| format!("--scan: expected ROWS,COLS as two positive integers (got {text:?})"))?;
    match v.as_slice() {
        [r, c] if *r > 0 && *c > 0 && r.checked_mul(*c).is_some_and(|n| n as u64 <= scatterlab_stem::load::MAX_FRAMES) => Ok([*r, *c]),
        _ => Err(format!("--scan: expected ROWS,COLS as two positive integers with at most {} positions (got {text:?})", scatterlab_stem::load::MAX_FRAMES)),
    }
}

/// Opens the acquisition at `master` (its folder is the file set), with the scan shape hint.
pub fn open(master: &Path, scan: Option<&str>) -> Result<(DirFileSet, Acquisition), String> {
    let hints = Hints { scan_shape: scan.map(parse_scan).transpose()?, ..Default::default() };
    let (files, name) = DirFileSet::for_file(master).map_err(|e| e.to_string())?;
    let acq = Acquisition::open(&files, &name, &hints).map_err(|e| e.to_string())?;
    Ok((files, acq))
}

/// One line on missing frames for stderr, or `None` when the acquisition is complete.
pub fn missing_summary(acq: &Acquisition) -> Option<String> {
    let n = acq.n_missing_frames();
    (n > 0).then(|| {
        let files: Vec<&str> = acq.missing().iter().map(|m| m.file.as_str()).collect();
        format!("{n} of {} frames missing ({})", acq.n_frames(), if files.is_empty() { "no data file holds them".to_owned() } else { files.join(", ") })
    })
}
