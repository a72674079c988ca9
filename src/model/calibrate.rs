//! `krylov calibrate`: measures our own kernels on the device and fits the model's curves.
//!
//! * dispatch cost `t_d`: [`dependent_dispatch_us`] (back-to-back dependent launches of a
//!   one-workgroup kernel in one pass);
//! * round trip: one such launch submitted alone and read back, minus `t_d`;
//! * vector curve: `stream_triad` ([`measure_bandwidth`], 12 bytes per entry) from a few KB
//!   to beyond the last-level cache;
//! * reduction curve: `stream_update4_reduce` (update_cg's 7 accesses per entry and its
//!   workgroup reduction, [`probe_update4_variant`]);
//! * SpMV curve per format: [`bench_spmv`] on `poisson2d` and `laplace3d` at several sizes,
//!   bytes counted on the uploaded layout ([`super::layout`]).
//!
//! Each curve is fitted with [`super::sigmoid::fit`]. Times are wall-clock per launch over
//! batches of launches in one submit (median of batches), the situation of a solver loop.

use super::layout::{LayoutParams, MODEL_FORMATS, spmv_layout};
use super::profile::{DeviceIdentity, Profile, SCHEMA_VERSION, utc_now};
use super::sigmoid::{Fit, Sample, fit};
use crate::base::error::{KrylovError, Result};
use crate::bench::{
    SpmvBench, bench_spmv, dependent_dispatch_us, measure_bandwidth, probe_update4_variant,
};
use crate::gpu::Engine;
use crate::matrix::{Csr, generators};

/// How much to measure.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CalibrateOptions {
    /// Fewer, smaller sizes (seconds on a software adapter; for tests and CI).
    pub quick: bool,
}

/// The identity of the engine's adapter, as profiles record it.
pub fn device_identity(engine: &Engine) -> DeviceIdentity {
    let info = engine.context().adapter.get_info();
    DeviceIdentity {
        name: info.name,
        vendor: info.vendor,
        device: info.device,
        backend: format!("{:?}", info.backend),
        driver: info.driver,
        driver_info: info.driver_info,
    }
}

/// Progress lines go to `log` (the CLI prints them on stderr).
pub fn calibrate(
    engine: &Engine,
    opts: CalibrateOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Profile> {
    let quick = opts.quick;
    let wg = engine.tuning().workgroup_size as usize;
    let dispatch = dependent_dispatch_us(engine, 100)? * 1e-6;
    let single = dependent_dispatch_us(engine, 1)? * 1e-6;
    let round_trip = (single - dispatch).max(0.0);
    log(&format!(
        "dispatch {:.2} µs, round trip {:.2} µs",
        dispatch * 1e6,
        round_trip * 1e6
    ));

    // Entries: 2^8 (3 KB of triad traffic) to 2^22 (50 MB) quick, 2^26 (800 MB) full.
    let top = if quick { 21 } else { 26 };
    let step = if quick { 2 } else { 1 };
    let entries: Vec<usize> = (8..=top).step_by(step).map(|k| 1usize << k).collect();
    let mut vector = Vec::new();
    let mut reduction = Vec::new();
    for &n in &entries {
        let gbs = measure_bandwidth(engine, n)?;
        let bytes = 12.0 * (4 * n.div_ceil(4)) as f64;
        vector.push(Sample {
            bytes,
            seconds: bytes / (gbs * 1e9),
        });
        let groups = n.div_ceil(wg).clamp(1, engine.tuning().max_groups as usize) as u32;
        let gbs = probe_update4_variant(engine, "stream_update4_reduce", n, wg as u32, groups)?;
        let bytes = 28.0 * n as f64;
        reduction.push(Sample {
            bytes,
            seconds: bytes / (gbs * 1e9),
        });
    }
    let vector = fitted("vector", &vector, dispatch, log)?;
    let reduction = fitted("reduction", &reduction, dispatch, log)?;

    let params = LayoutParams {
        workgroup_size: wg,
        sell_c: crate::gpu::format::sell_c(engine),
        // Calibration runs every format on the stencils, however padded: the bytes are
        // counted on the padded layout.
        max_padding: 64.0,
    };
    let specs: Vec<String> = if quick {
        [16, 32, 64, 128, 256]
            .iter()
            .map(|k| format!("poisson2d:{k}"))
            .chain([8, 16, 32].iter().map(|k| format!("laplace3d:{k}")))
            .collect()
    } else {
        [16, 32, 64, 128, 256, 512, 1024, 2048]
            .iter()
            .map(|k| format!("poisson2d:{k}"))
            .chain(
                [8, 16, 32, 64, 128]
                    .iter()
                    .map(|k| format!("laplace3d:{k}")),
            )
            .collect()
    };
    let how = SpmvBench {
        runs: if quick { 3 } else { 5 },
        repeat: if quick { 10 } else { 50 },
        max_padding: params.max_padding,
    };
    let mut spmv: Vec<Vec<Sample>> = vec![Vec::new(); MODEL_FORMATS.len()];
    for spec in &specs {
        let a64: Csr<f64> = generators::from_spec(spec)?;
        let a32: Csr<f32> = a64.cast()?;
        for (i, &format) in MODEL_FORMATS.iter().enumerate() {
            let Ok(layout) = spmv_layout(&a64, format, &params) else {
                continue;
            };
            let row = bench_spmv(engine, &a32, spec, format, how, None)?;
            if row.refused.is_some() || !row.seconds.is_finite() {
                continue;
            }
            spmv[i].push(Sample {
                bytes: layout.spmv_bytes(4) as f64,
                seconds: row.seconds,
            });
        }
        log(&format!(
            "spmv {spec}: {} formats timed",
            MODEL_FORMATS.len()
        ));
    }
    let mut curves = std::collections::BTreeMap::new();
    for (format, samples) in MODEL_FORMATS.iter().zip(&spmv) {
        let f = fitted(&format!("spmv {format}"), samples, dispatch, log)?;
        curves.insert(format.as_str().to_string(), f);
    }
    Ok(Profile {
        schema_version: SCHEMA_VERSION,
        device: device_identity(engine),
        created: utc_now(),
        quick,
        workgroup_size: wg,
        sell_c: params.sell_c,
        max_binding_bytes: engine.context().limits.max_storage_buffer_binding_size,
        dispatch_seconds: dispatch,
        round_trip_seconds: round_trip,
        vector,
        reduction,
        spmv: curves,
    })
}

fn fitted(name: &str, samples: &[Sample], dispatch: f64, log: &mut dyn FnMut(&str)) -> Result<Fit> {
    let f = fit(samples, dispatch).map_err(|e| {
        KrylovError::InvalidOption(format!("calibration of the {name} curve failed: {e}"))
    })?;
    log(&format!(
        "{name}: mu {:.2} sigma {:.2} nu {:.2} GB/s; rms error {:.1}%, worst {:.1}%",
        f.curve.mu,
        f.curve.sigma,
        f.curve.nu / 1e9,
        100.0 * f.rms_relative_error,
        100.0 * f.max_relative_error
    ));
    Ok(f)
}
