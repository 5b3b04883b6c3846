//! The fit driver behind `Scatterlab.fit`, natively on the CPU: a short seeded DE on the fixture's
//! fit task lowers χ² and is reproducible, reports every generation, stops at a cancel with a state
//! that resumes (DE) and polishes (LM); MCMC runs; bad options are named.
//! The browser twin (the same fit inside wasm, via the exported handle) is in `browser_fit.rs`.
#![cfg(not(target_arch = "wasm32"))]
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use std::future::Future;
use std::task::{Context, Poll, Waker};

use scatterlab_core::CancelToken;
use scatterlab_refl::Engine;
use scatterlab_web::fit::{run_fit, FitHost, FitMethod, FitOptions, FitOutcome, FitReport};

/// `shared/fixtures` sits beside the repository (here and in CI's fresh clone).
const TASK: &str = include_str!("../../../../shared/fixtures/refl/fit_task.json");

/// The fixture's χ² at the truth (12 free parameters, 4 datasets); the fitter never reads it.
const CHI2_AT_TRUTH: f64 = 707.53;

/// Native CPU fits never wait on anything: one poll completes them.
fn ready<F: Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    match future.as_mut().poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(v) => v,
        Poll::Pending => panic!("CPU fit was pending"),
    }
}

/// Records reports; cancels at the pause after DE generation `cancel_after` (as a worker does when
/// a cancel message arrived during that generation).
struct TestHost {
    reports: Vec<FitReport>,
    cancel: CancelToken,
    cancel_after: Option<usize>,
    /// Cancels at the pause after this sampler step instead.
    cancel_after_step: Option<usize>,
    start: std::time::Instant,
}

impl TestHost {
    fn new(cancel: &CancelToken, cancel_after: Option<usize>) -> Self {
        TestHost { reports: Vec::new(), cancel: cancel.clone(), cancel_after, cancel_after_step: None, start: std::time::Instant::now() }
    }
    fn de_generations(&self) -> Vec<usize> {
        self.reports.iter().filter(|r| r.progress.method == "de").map(|r| r.progress.iteration).collect()
    }
}

impl FitHost for TestHost {
    fn progress(&mut self, report: &FitReport) {
        self.reports.push(*report);
    }
    async fn pause(&mut self) {
        let last_de = self.de_generations().last().copied();
        if self.cancel_after.is_some() && last_de == self.cancel_after {
            self.cancel.cancel();
        }
        let last = self.reports.last().map(|r| (r.progress.method, r.progress.iteration));
        if self.cancel_after_step.is_some_and(|n| last == Some(("mcmc", n))) {
            self.cancel.cancel();
        }
    }
    fn now_ms(&self) -> f64 {
        self.start.elapsed().as_secs_f64() * 1e3
    }
}

fn fit(options: &FitOptions, cancel_after: Option<usize>) -> (FitOutcome, TestHost) {
    let cancel = CancelToken::new();
    let mut host = TestHost::new(&cancel, cancel_after);
    let out = ready(run_fit(TASK, options, Engine::Cpu, &mut host, &cancel)).unwrap_or_else(|e| panic!("fit failed: {e}"));
    (out, host)
}

fn short_de(seed: u64) -> FitOptions {
    FitOptions { seed, max_generations: 15, popsize: 5, ..Default::default() }
}

#[test]
fn short_seeded_de_lowers_chi2_and_repeats() {
    let (a, host) = fit(&short_de(11), None);
    let state = a.state.as_ref().unwrap();
    let de_best = state.energies.iter().copied().fold(f64::INFINITY, f64::min);
    let first = host.reports[0].progress.best_chi2;
    println!(
        "seed 11, 15 generations × 60: DE χ² {first:.1} (gen 1) → {de_best:.1} (gen 15); LM polish → {:.3} (truth {CHI2_AT_TRUTH}); {} evaluations in {:.2} s",
        a.chi2, a.evaluations, a.seconds
    );
    assert_eq!(host.de_generations(), (1..=15).collect::<Vec<_>>(), "one report per generation");
    assert!(host.reports.iter().all(|r| r.progress.max_iterations == 15 || r.progress.method != "de"));
    assert_eq!((a.generations, a.cancelled, a.names.len(), a.n_points), (15, false, 12, 4 * 180));
    assert_eq!(state.population.len(), 60);
    // DE alone: 60 initial + 15 × 60 trial evaluations, then LM's.
    assert_eq!(state.evaluations, 60 * 16);
    assert!(a.evaluations > state.evaluations);
    assert!(de_best < 0.95 * first, "DE did not lower χ²: {first} → {de_best}");
    assert!(a.chi2 <= de_best && a.stderr.iter().all(|s| s.is_finite() && *s > 0.0));
    // Evaluations never go backwards across the phases (DE then LM).
    assert!(host.reports.windows(2).all(|w| w[1].progress.evaluations >= w[0].progress.evaluations));
    let (b, _) = fit(&short_de(11), None);
    assert_eq!((a.chi2, &a.x, &a.state), (b.chi2, &b.x, &b.state), "same seed, different result");
    let (c, _) = fit(&short_de(12), None);
    assert_ne!(c.state.as_ref().unwrap().population, state.population, "the seed has no effect");
}

#[test]
fn cancel_stops_with_a_state_that_resumes_and_polishes() {
    let (cut, host) = fit(&short_de(5), Some(3));
    println!("cancelled after generation 3: χ² {:.1}, {} evaluations", cut.chi2, cut.evaluations);
    assert!(cut.cancelled && cut.generations == 3 && cut.evaluations == 60 * 4);
    assert_eq!(host.de_generations(), vec![1, 2, 3]);
    assert!(cut.stderr.iter().all(|s| s.is_nan()), "no LM after a cancel");
    assert!(host.reports.iter().all(|r| r.progress.method == "de"));
    let state = cut.state.clone().unwrap();

    let (more, host) = fit(&FitOptions { resume: Some(state.clone()), max_generations: 4, ..short_de(5) }, None);
    println!("resumed for 4 generations: DE χ² {:.1} → polished {:.3}", more.state.as_ref().unwrap().chi2, more.chi2);
    assert_eq!(host.de_generations(), vec![4, 5, 6, 7], "generations continue from the state");
    assert_eq!((more.generations, more.state.as_ref().unwrap().evaluations), (7, 60 * 8));
    assert!(more.state.as_ref().unwrap().chi2 <= state.chi2, "resuming lost the best member");

    let (polished, _) = fit(&FitOptions { method: FitMethod::Lm, resume: Some(state.clone()), ..Default::default() }, None);
    println!("LM from the cancelled state: χ² {:.1} → {:.3}", state.chi2, polished.chi2);
    assert!(polished.chi2 < state.chi2 && polished.state.is_none() && !polished.cancelled);
    // The returned model carries the fitted values: an LM run from it starts where this one ended.
    let again = ready(run_fit(
        &polished.model_json,
        &FitOptions { method: FitMethod::Lm, ..Default::default() },
        Engine::Cpu,
        &mut TestHost::new(&CancelToken::new(), None),
        &CancelToken::new(),
    ))
    .unwrap();
    assert!(again.chi2 <= polished.chi2 * (1.0 + 1e-9), "{} vs {}", again.chi2, polished.chi2);
}

#[test]
fn mcmc_reports_its_steps_and_a_summary() {
    let (m, host) = fit(&FitOptions { method: FitMethod::Mcmc, steps: 12, ..short_de(3) }, None);
    let summary = m.mcmc.as_ref().unwrap();
    println!("mcmc: χ²(median) {:.2}, acceptance {:.2}, {} samples", m.chi2, summary.acceptance_fraction, summary.samples);
    let steps: Vec<usize> = host.reports.iter().filter(|r| r.progress.method == "mcmc").map(|r| r.progress.iteration).collect();
    assert_eq!(steps, (1..=12).collect::<Vec<_>>());
    assert_eq!(summary.samples, 48 * 9, "48 walkers × (12 − 3 burn-in) steps");
    assert_eq!(summary.sample_values.len(), 48 * 9 * 12, "one row of 12 values per sample");
    assert!(m.chi2.is_finite() && m.stderr.iter().all(|s| s.is_finite()));
}

#[test]
fn mcmc_stops_at_a_cancel_between_steps() {
    let options = FitOptions { method: FitMethod::Mcmc, steps: 40, ..short_de(3) };
    let cancel = CancelToken::new();
    // After burn-in (10 of 40 steps): the samples so far are summarised.
    let mut host = TestHost { cancel_after_step: Some(14), ..TestHost::new(&cancel, None) };
    let m = ready(run_fit(TASK, &options, Engine::Cpu, &mut host, &cancel)).unwrap();
    let last = host.reports.last().map(|r| (r.progress.method, r.progress.iteration));
    println!("cancelled after step 14: {} samples, χ² {:.2}", m.mcmc.as_ref().map_or(0, |s| s.samples), m.chi2);
    assert!(m.cancelled && last == Some(("mcmc", 14)), "{last:?}");
    assert_eq!(m.mcmc.as_ref().map(|s| s.samples), Some(48 * 4), "steps 11–14 kept");
    // Before the end of burn-in: the fit keeps LM's result, no summary.
    let cancel = CancelToken::new();
    let mut host = TestHost { cancel_after_step: Some(5), ..TestHost::new(&cancel, None) };
    let early = ready(run_fit(TASK, &options, Engine::Cpu, &mut host, &cancel)).unwrap();
    assert!(early.cancelled && early.mcmc.is_none() && early.stderr.iter().all(|s| s.is_finite()));
}

#[test]
fn bad_options_are_named() {
    let cancel = CancelToken::new();
    let run = |options: &FitOptions, text: &str| ready(run_fit(text, options, Engine::Cpu, &mut TestHost::new(&cancel, None), &cancel)).unwrap_err().to_string();
    let e = run(&FitOptions { max_generations: 0, ..Default::default() }, TASK);
    assert!(e.contains("maxGenerations"), "{e}");
    let (cut, _) = fit(&short_de(1), Some(1));
    let mut state = cut.state.unwrap();
    state.population[7].pop();
    let e = run(&FitOptions { resume: Some(state), ..Default::default() }, TASK);
    assert!(e.contains("resume.population[7]") && e.contains("11 values for 12"), "{e}");
    let e = run(&FitOptions::default(), "{\"format\": \"nope\"}");
    assert!(!e.is_empty());
}

/// The library's DE trajectory test model (a film, 3 free parameters, 40 points).
const FILM: &str = include_str!("../../refl/tests/data/models/film_de_trajectory.json");

/// Issue 17 item 20: with the default settings the worker's driver follows `scatterlab refl fit`'s
/// trajectory (default DE options with the seed, then LM): the same generations, evaluations,
/// population, χ² and values, bit for bit; also when cancelled after generation 10 and resumed.
#[test]
fn the_worker_follows_the_cli_trajectory() {
    use scatterlab_refl::fit::{self, DeOptions, LmOptions, Objective, ObjectiveOptions};
    let model = scatterlab_refl::model::Model::from_json(FILM).unwrap();
    let objective = Objective::new(&model, ObjectiveOptions::default()).unwrap();
    let run = |options: &FitOptions, cancel_after: Option<usize>| {
        let cancel = CancelToken::new();
        let mut host = TestHost::new(&cancel, cancel_after);
        ready(run_fit(FILM, options, Engine::Cpu, &mut host, &cancel)).unwrap_or_else(|e| panic!("fit failed: {e}"))
    };
    for seed in [3, 2026] {
        let options = FitOptions { seed, ..Default::default() };
        let out = run(&options, None);
        let cancel = CancelToken::new();
        let de = ready(fit::differential_evolution(&objective, Engine::Cpu, &DeOptions { seed, ..Default::default() }, None, &mut |_| {}, &cancel)).unwrap();
        let lm = fit::levenberg_marquardt(&objective, &de.x, &LmOptions::default(), &mut |_| {}, &cancel).unwrap();
        let (x, chi2) = if lm.chi2 <= de.chi2 { (&lm.x, lm.chi2) } else { (&de.x, de.chi2) };
        println!(
            "seed {seed}: worker {} generations, {} evaluations, χ² {}; CLI pipeline {} generations, {} + {} evaluations, χ² {chi2}",
            out.generations, out.evaluations, out.chi2, de.generations, de.evaluations, lm.evaluations
        );
        assert!(de.converged && out.converged, "seed {seed}: converged");
        assert_eq!((out.generations, out.state.as_ref()), (de.generations, Some(&de)), "seed {seed}: DE state");
        assert_eq!(out.evaluations, de.evaluations + lm.evaluations, "seed {seed}: evaluations");
        assert_eq!((out.chi2.to_bits(), &out.x), (chi2.to_bits(), x), "seed {seed}: χ² and values");

        let cut = run(&options, Some(10));
        assert!(cut.cancelled && cut.generations == 10, "seed {seed}: cancelled after {}", cut.generations);
        let resumed = run(&FitOptions { resume: cut.state.clone(), max_generations: options.max_generations - 10, ..options.clone() }, None);
        assert_eq!(resumed.state.as_ref(), Some(&de), "seed {seed}: cancelled at 10 and resumed");
        assert_eq!((resumed.evaluations, resumed.chi2.to_bits()), (out.evaluations, out.chi2.to_bits()), "seed {seed}: resumed counts and χ²");
    }
}

/// How the browser test's bounds were chosen (`cargo test -p scatterlab-web --test fit_driver --
/// --ignored --nocapture`): the bounds hold for any seed, so they do not depend on wasm32 drawing
/// native's trajectory (since issue 17 item 20 it should: indices are drawn at 64-bit width; the
/// browser test does not pin it). Seeds 0..24 on 2026-12-05 (per-generation seeds of
/// `scatterlab_refl::fit::generation_seed`): DE best after 15 generations 166 859 – 291 466
/// (≤ 0.81 × generation 1's), after the LM polish 695 – 188 563; seed 4's LM stops on a singular
/// JᵀJ (a parameter pinned where it does not affect the data), which the survey reports and skips.
#[test]
#[ignore]
fn seed_survey_for_browser_bounds() {
    let (mut worst_de, mut worst_ratio, mut worst_lm) = (0.0f64, 0.0f64, 0.0f64);
    for seed in 0..24 {
        let cancel = CancelToken::new();
        let mut host = TestHost::new(&cancel, None);
        let a = match ready(run_fit(TASK, &short_de(seed), Engine::Cpu, &mut host, &cancel)) {
            Ok(a) => a,
            Err(e) => {
                println!("seed {seed:2}: fit failed: {e}");
                continue;
            }
        };
        let (first, de) = (host.reports[0].progress.best_chi2, a.state.as_ref().unwrap().chi2);
        println!("seed {seed:2}: generation 1 {first:9.0}, generation 15 {de:9.0}, LM {:9.0}", a.chi2);
        (worst_de, worst_ratio, worst_lm) = (worst_de.max(de), worst_ratio.max(de / first), worst_lm.max(a.chi2));
    }
    println!("worst: DE {worst_de:.0}, DE/generation 1 {worst_ratio:.3}, LM {worst_lm:.0}");
}
