//! How `krylov solve` shows a [`SolveReport`]: the text summary, the JSON object, the
//! residual history as CSV.

use krylov_wgpu::solvers::SolveReport;

/// The summary printed without `--json`.
pub fn print_text(report: &SolveReport, name: &str, solution_error: Option<f64>) {
    println!(
        "{name}: n = {}, nnz = {}; {} {} {}{}",
        report.n,
        report.nnz,
        report.variant,
        report.method,
        report.precision,
        match report.reduction {
            krylov_wgpu::solvers::Reduction::Compensated => " (compensated sums)",
            krylov_wgpu::solvers::Reduction::Plain => "",
        },
    );
    println!("device: {}: {}", report.device, report.device_reason);
    if let Some(r) = &report.refinement {
        let residuals: Vec<String> = r
            .outer_residuals
            .iter()
            .map(|v| format!("{v:.2e}"))
            .collect();
        println!(
            "mixed precision: {} outer iteration(s) in {} around f32 solves of {:?} iterations; \
             |b - Ax|/|b|: {}",
            r.outer_iterations,
            r.outer_precision,
            r.inner_iterations,
            residuals.join(" -> ")
        );
    }
    println!(
        "{} after {} iterations: {}; true relative residual {:.3e}; {:.3} s",
        if report.converged {
            "converged"
        } else {
            "NOT converged"
        },
        report.iterations,
        report.reason_detail,
        report.relative_residual,
        report.seconds
    );
    if report.replacements > 0 {
        println!(
            "{} residual replacement(s): the recurrences drifted from b - Ax and were recomputed \
             from x",
            report.replacements
        );
    }
    if report.device.is_gpu() {
        println!(
            "{:.2} dispatches and {:.3} host transfers per iteration",
            report.dispatches_per_iteration, report.transfers_per_iteration
        );
    }
    if report.device.is_gpu() || report.reductions_per_iteration > 0.0 {
        let per_cycle = match (report.cycles, report.syncs_per_cycle) {
            (Some(c), Some(s)) => format!(", {s:.2} per restart cycle ({c} cycles)"),
            _ => String::new(),
        };
        println!(
            "{:.2} global reductions and {:.3} host syncs per iteration{per_cycle}",
            report.reductions_per_iteration, report.syncs_per_iteration
        );
    }
    if report.device.is_gpu() {
        println!(
            "format {} ({} on the GPU): {}",
            report.format,
            human_bytes(report.matrix_bytes),
            report.format_reason
        );
    }
    if let Some(d) = &report.devices {
        for (i, p) in d.devices.iter().enumerate() {
            println!(
                "device {i}: {} (adapter {}): rows {}..{} ({} interior), {} non-zeros, halo {}, sends {}{}{}",
                p.adapter,
                p.adapter_index,
                p.first_row,
                p.first_row + p.rows,
                p.interior_rows,
                p.nnz,
                p.halo,
                p.send,
                if p.split_binding {
                    ", matrix over two bindings" // a distributed block's CSR: at most two
                } else {
                    ""
                },
                if p.kernel_times.is_empty() {
                    String::new()
                } else {
                    let gpu: f64 = p.kernel_times.iter().map(|k| k.seconds).sum();
                    format!(", {gpu:.4} s in kernels")
                }
            );
        }
        println!(
            "exchange: {} values ({}) per iteration through the host; {:.1} % of the loop copying halos, {:.3} s waiting on the devices, {:.3} s submitting ({:.3} s of it in wgpu's queue submit)",
            d.exchange_values_per_iteration,
            human_bytes(d.exchange_bytes_per_iteration),
            100.0 * d.exchange_share,
            d.wait_seconds,
            d.submit_seconds,
            d.queue_submit_seconds
        );
    }
    if let Some(err) = solution_error {
        println!("RMS error against the exact solution (all ones): {err:.3e}");
    }
    // What `auto` chose, the recoveries and fall-backs: the JSON's `notes`.
    for note in &report.notes {
        println!("note: {note}");
    }
}

/// The full report as one JSON object, with the matrix's name, the RMS error against the
/// exact solution (null when unknown), ‖b − Ax‖∞ of the solution returned (f64, host) and
/// the fields of `extra` (an object: the performance model's choice).
pub fn print_json(
    report: &SolveReport,
    name: &str,
    solution_error: Option<f64>,
    residual_inf: f64,
    extra: Option<serde_json::Value>,
) {
    let mut v = serde_json::to_value(report).expect("serialisable");
    if let Some(serde_json::Value::Object(fields)) = extra {
        for (k, value) in fields {
            v[k] = value;
        }
    }
    v["matrix"] = name.into();
    v["residual_inf"] =
        serde_json::Number::from_f64(residual_inf).map_or(serde_json::Value::Null, Into::into);
    v["solution_error"] = solution_error.map_or(serde_json::Value::Null, Into::into);
    println!("{v}");
}

/// `--history`: iteration,residual,relative_residual per recorded iteration.
pub fn history_csv(report: &SolveReport) -> String {
    let mut csv = String::from("iteration,residual,relative_residual\n");
    for (k, r) in report.history.iter().enumerate() {
        let rel = if report.b_norm > 0.0 {
            r / report.b_norm
        } else {
            *r
        };
        csv.push_str(&format!("{k},{r:e},{rel:e}\n"));
    }
    csv
}

/// `1234567` → `1.2 MB`.
fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 1_000_000_000 => format!("{:.2} GB", b as f64 / 1e9),
        b if b >= 1_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 1_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

#[cfg(test)]
mod tests {
    use super::human_bytes;

    #[test]
    fn human_bytes_picks_the_unit() {
        assert_eq!(human_bytes(999), "999 B");
        assert_eq!(human_bytes(41_000), "41.0 kB");
        assert_eq!(human_bytes(1_234_567), "1.2 MB");
        assert_eq!(human_bytes(2_500_000_000), "2.50 GB");
    }
}
