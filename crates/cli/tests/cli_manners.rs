//! The command line behaves like a Unix tool: output piped into `head` ends the program quietly
//! (no panic, no backtrace), and `--device gpu` on a plain shell prints no loader complaints
//! about `XDG_RUNTIME_DIR`.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

fn model_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../refl/tests/data/models/film_two_energies.json")
}

#[test]
fn a_closed_pipe_ends_the_output_quietly() {
    // ~1.7 MB of JSON: far more than a pipe buffers (64 KiB), so the reader's going away is met
    // mid-write. (20,000 points: the converged smearing evaluates ~120 nodes per point, and
    // 200,000 would pass the 10⁷-point budget and fail before writing.)
    let model = model_path();
    let mut child = Command::new(env!("CARGO_BIN_EXE_scatterlab"))
        .args(["refl", "compute", "--model", model.to_str().unwrap(), "--q-grid", "0.01:0.2:20000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut head = [0u8; 10];
    child.stdout.take().unwrap().read_exact(&mut head).unwrap(); // `| head -c 10`, then close
    let mut err = String::new();
    child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(&head[..1], b"{");
    assert!(!err.contains("panicked") && !err.contains("backtrace") && !err.contains("Broken pipe"), "stderr: {err}");
    // Ended by SIGPIPE like `yes | head` (or exit 0 if it had finished before the close).
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert!(status.success() || status.signal() == Some(13), "{status:?}");
    }
}

#[test]
fn gpu_on_a_plain_shell_has_no_runtime_dir_complaint() {
    let model = model_path();
    let out = Command::new(env!("CARGO_BIN_EXE_scatterlab"))
        .args(["refl", "compute", "--model", model.to_str().unwrap(), "--device", "gpu"])
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() && err.contains("no GPU") {
        eprintln!("skipped: no GPU adapter ({err})");
        return;
    }
    assert!(!err.contains("XDG_RUNTIME_DIR"), "{err}");
}
