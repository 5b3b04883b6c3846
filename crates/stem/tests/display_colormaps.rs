//! Display: the shared colormap table (matplotlib's entries at both ends), CPU colouring from the
//! fixtures' LUT indices, the colour wheel's hues, and the WGSL twin on fresh random values:
//! colormap entries identical wherever the f32 normalised value is not within 1e-5 of a LUT bin
//! edge (WGSL division may differ from IEEE by 2.5 ulp; such pixels may move by one entry), colour
//! wheel channels within 1 (f32 atan2/sqrt). Seed printed; SCATTERLAB_SEED replays.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)] // a test stops at its first failure, with the message

use rand::{Rng, SeedableRng};
use scatterlab_stem::gpu::DisplayGpu;
use scatterlab_stem::reduce::colormap::{color_wheel, colorize, Colormap, TABLE};
use scatterlab_stem::reduce::display::{lut_indices, normalise, Scale};

#[test]
fn the_table_holds_the_maps() {
    assert_eq!(TABLE.len(), 10 * 256 * 4);
    assert_eq!(Colormap::Gray.rgba(0), [0, 0, 0, 255]);
    assert_eq!(Colormap::Gray.rgba(255), [255, 255, 255, 255]);
    assert_eq!(Colormap::Viridis.rgba(0), [68, 1, 84, 255], "matplotlib viridis #440154");
    assert_eq!(Colormap::Viridis.rgba(255), [253, 231, 37, 255], "matplotlib viridis #fde725");
    assert_eq!(Colormap::from_name("rdbu").unwrap(), Colormap::RdBu);
    assert!(Colormap::from_name("jet").unwrap_err().to_string().contains("colormap 'jet'"));
    let values = [0.5, 1.0, 25.5, 50.0, 99.0, -3.0];
    let rgba = colorize(&values, 1.0, 50.0, Scale::Linear, Colormap::Inferno).unwrap();
    let idx = lut_indices(&values, 1.0, 50.0).unwrap();
    for (c, i) in rgba.iter().zip(idx) {
        assert_eq!(*c, Colormap::Inferno.rgba(i));
    }
    // Wheel: +col is red, +row (a quarter turn) is between green and cyan (hue 0.25), zero is black.
    let w = color_wheel(&[0.0, 1.0, 0.0], &[1.0, 0.0, 0.0], 1.0).unwrap();
    assert_eq!(w[0], [255, 0, 0, 255]);
    assert_eq!(w[1], [128, 255, 0, 255]);
    assert_eq!(w[2], [0, 0, 0, 255]);
}

#[test]
fn the_gpu_twin_colours_alike() {
    let Some(ctx) = scatterlab_testkit::gpu_or_skip("stem display colormaps", || pollster::block_on(scatterlab_gpu::GpuContext::new(&Default::default()))) else { return };
    let gpu = pollster::block_on(DisplayGpu::new(&ctx)).unwrap();
    let seed = scatterlab_testkit::seed("stem display colormaps");
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let values: Vec<f64> = (0..20_000).map(|_| rng.gen_range(-10.0..110.0)).collect();
    for map in Colormap::ALL {
        let (c, g) = (colorize(&values, 0.0, 100.0, Scale::Linear, map).unwrap(), pollster::block_on(gpu.colorize(&values, 0.0, 100.0, Scale::Linear, map)).unwrap());
        let mut edges = 0;
        for ((v, a), b) in values.iter().zip(&c).zip(&g) {
            let x = normalise(*v, 0.0, 100.0) * 255.0;
            // Interior bin edges only: clipped values (norm exactly 0 or 1) must match.
            if x > 0.0 && x < 255.0 && (x - x.round()).abs() < 1e-5 {
                edges += 1;
                continue;
            }
            assert_eq!(a, b, "{}: value {v}", map.name());
        }
        assert!(edges < 20, "{edges} values at bin edges");
    }
    let r: Vec<f64> = (0..5000).map(|_| rng.gen_range(-2.0..2.0)).collect();
    let cc: Vec<f64> = (0..5000).map(|_| rng.gen_range(-2.0..2.0)).collect();
    let (c, g) = (color_wheel(&r, &cc, 1.5).unwrap(), pollster::block_on(gpu.color_wheel(&r, &cc, 1.5)).unwrap());
    let worst = c.iter().zip(&g).flat_map(|(a, b)| a.iter().zip(b).map(|(x, y)| x.abs_diff(*y))).max().unwrap_or(0);
    println!("colour wheel: worst channel difference {worst}");
    assert!(worst <= 1);
}
