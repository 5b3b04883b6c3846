//! Medians of repeated runs after a warm-up, wall and CPU time (the machines are shared and noisy).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a benchmark stops at its first failure, with the message

use std::time::Instant;

/// Median wall and process-CPU seconds of `reps` runs of `f` after one warm-up run.
pub fn median_seconds(reps: usize, mut f: impl FnMut()) -> (f64, f64) {
    f();
    let mut wall = Vec::with_capacity(reps);
    let mut cpu = Vec::with_capacity(reps);
    for _ in 0..reps {
        let (w0, c0) = (Instant::now(), cpu_seconds());
        f();
        wall.push(w0.elapsed().as_secs_f64());
        cpu.push(cpu_seconds() - c0);
    }
    (median(&mut wall), median(&mut cpu))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Process CPU time in seconds (user + system), from /proc on Linux; 0 elsewhere.
pub fn cpu_seconds() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else { return 0.0 };
    // Fields after the parenthesised command name; utime and stime are the 14th and 15th fields.
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|s| s.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}
