//! `--format auto` without a device profile (and the tie-break of the model's choice): a
//! storage format from cheap statistics of the matrix — paper 003 Table 4's block densities,
//! the number of diagonals, the row-length spread, the number of non-zeros — and the kind of
//! processor that will run the kernels ([`RuleTarget`]).

use super::device::GpuContext;
use crate::base::Format;
use crate::base::report::FormatEstimate;
use crate::base::scalar::Scalar;
use crate::matrix::{Csr, MatrixStats};

/// The kind of processor the statistics rule chooses for. The rule differs in one place:
/// irregular rows in a small matrix (see [`RuleTarget::latency_nnz`]).
///
/// ```
/// use krylov_wgpu::gpu::RuleTarget;
/// assert_eq!(RuleTarget::from_device_type("DiscreteGpu"), RuleTarget::DiscreteGpu);
/// assert_eq!(RuleTarget::from_device_type("IntegratedGpu"), RuleTarget::OtherGpu);
/// assert_eq!(RuleTarget::from_device_type("Cpu"), RuleTarget::Cpu);
/// assert_eq!(RuleTarget::DiscreteGpu.latency_nnz(), Some(1_000_000));
/// assert_eq!(RuleTarget::Cpu.latency_nnz(), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleTarget {
    /// A GPU with its own memory (the H100 and H200 of BENCHMARKS.md: 3–3.6 TB/s).
    DiscreteGpu,
    /// Any other GPU: integrated, virtual or of no named type.
    OtherGpu,
    /// A CPU adapter (lavapipe), and the rule when no device is known ([`choose_format`]).
    Cpu,
}

impl RuleTarget {
    /// From wgpu's device type as the adapter summary names it (`DiscreteGpu`,
    /// `IntegratedGpu`, `VirtualGpu`, `Other`, `Cpu`).
    pub fn from_device_type(name: &str) -> Self {
        match name {
            "DiscreteGpu" => RuleTarget::DiscreteGpu,
            "Cpu" => RuleTarget::Cpu,
            _ => RuleTarget::OtherGpu,
        }
    }

    /// The target of `ctx`'s adapter, unless `KRYLOV_FORMAT_RULE` names one (`discrete-gpu`,
    /// `gpu` or `cpu`): `bench/model_replay.py` replays a GPU's picks on lavapipe with it.
    pub fn of(ctx: &GpuContext) -> Self {
        match std::env::var("KRYLOV_FORMAT_RULE").as_deref() {
            Ok("discrete-gpu") => RuleTarget::DiscreteGpu,
            Ok("gpu") => RuleTarget::OtherGpu,
            Ok("cpu") => RuleTarget::Cpu,
            _ => Self::from_device_type(&ctx.summary.device_type),
        }
    }

    /// Non-zeros below which a GPU's SpMV is latency-bound: its bytes (about 12 per non-zero
    /// in f32 CSR: value, column index, x) stream in less than one launch's fixed cost. On a
    /// discrete GPU 1e6 non-zeros are 12 MB, about 4 µs at 3 TB/s, and a dependent launch
    /// costs 4.7 µs on the H200 (BENCHMARKS.md, 2026-11-27). Other GPUs share the CPU's
    /// memory at about a tenth of that bandwidth: 1e5 (not measured). `None` on CPUs, whose
    /// threads are few and long-lived: no such regime.
    pub fn latency_nnz(self) -> Option<usize> {
        match self {
            RuleTarget::DiscreteGpu => Some(1_000_000),
            RuleTarget::OtherGpu => Some(100_000),
            RuleTarget::Cpu => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            RuleTarget::DiscreteGpu => "a discrete GPU",
            RuleTarget::OtherGpu => "a GPU",
            RuleTarget::Cpu => "a CPU",
        }
    }
}

/// What [`choose_format`] decided, and why (the report's `format` and `format_reason`).
#[derive(Debug, Clone, PartialEq)]
pub struct FormatChoice {
    pub format: Format,
    pub reason: String,
}

/// [`FormatEstimate`] of every concrete format for a matrix with statistics `stats`, values
/// of `value_bytes` bytes, a padding budget and the largest array the adapter binds.
pub fn format_estimates(
    stats: &MatrixStats,
    value_bytes: usize,
    max_padding: f64,
    binding_limit: u64,
) -> Vec<FormatEstimate> {
    let s = value_bytes as f64;
    let (n, nnz) = (stats.nrows as f64, stats.nnz.max(1) as f64);
    let estimate = |format, stored: f64, index_bytes: f64| {
        let fill = stored / nnz;
        FormatEstimate {
            format,
            bytes: (stored * s + index_bytes) as u64,
            fill,
            fits: (fill <= max_padding || stats.nnz == 0)
                && stored * s <= binding_limit as f64
                && index_bytes <= binding_limit as f64,
        }
    };
    let mut out = vec![
        estimate(Format::Csr, nnz, (n + 1.0) * 4.0 + nnz * 4.0),
        estimate(
            Format::Ell,
            n * stats.row_len_max as f64,
            n * stats.row_len_max as f64 * 4.0,
        ),
        estimate(
            Format::Dia,
            n * stats.ndiag as f64,
            stats.ndiag as f64 * 4.0,
        ),
    ];
    let sell = ((stats.row_len_mean + stats.row_len_std) * n).max(nnz);
    out.push(estimate(Format::Sell, sell, sell * 4.0 + 8.0 * n));
    for (f, nb, d) in [
        (Format::Bcsr1, 1.0, 1.0),
        (Format::Bcsr2, 2.0, stats.density[0]),
        (Format::Bcsr4, 4.0, stats.density[1]),
        (Format::Bcsr8, 8.0, stats.density[2]),
    ] {
        let stored = if d > 0.0 { nnz / d } else { 0.0 };
        out.push(estimate(f, stored, stored / (nb * nb) * 4.0 + 8.0 * n / nb));
    }
    out
}

/// Chooses a storage format from cheap statistics of `a` (paper 003 Table 4's block
/// densities, the number of diagonals, the row-length spread, the non-zeros):
///
/// 1. DIA when the diagonals are nearly full (≤ 1.5 stored entries per non-zero): no column
///    indices are loaded at all — except in a GPU's latency regime (4.).
/// 2. BCSR with the largest N whose blocks are dense enough (d8 ≥ 0.7, d4 ≥ 0.7, d2 ≥ 0.8):
///    one column index per N² values.
/// 3. On a GPU, CSR while A has fewer non-zeros than [`RuleTarget::latency_nnz`]: the SpMV is
///    latency-bound there and bytes do not rank the formats; CSR's one thread per row is the
///    shortest kernel and the most consistent (H200, BENCHMARKS.md 2026-11-29, three device
///    calls, 21 matrices under 1e6 non-zeros: CSR within 5 % of the fastest format on 17, 17
///    and 14 of them; DIA on 10, 6 and 9 of its 14; SELL on 4, 9 and 7; BCSR 1×1 on 9, 9
///    and 8).
/// 4. SELL-C-σ when row lengths vary (longest row > 2× the mean + 2, or spread > 0.5× the
///    mean): sorting within σ keeps padding low where ELL would pad every row to the longest
///    (random-spd:200000:11:3, 2.2e6 non-zeros: SELL 38.9 µs per CG iteration, CSR 46.9).
/// 5. CSR otherwise (uniform short rows: CSR scalar loads the same bytes as ELL, and was
///    measured faster than ELL on the H200, see BENCHMARKS.md).
///
/// Formats whose storage exceeds `max_padding` per non-zero are skipped. Without a device
/// this is the rule for [`RuleTarget::Cpu`]; [`choose_format_for`] names the target.
pub fn choose_format<T: Scalar>(a: &Csr<T>, max_padding: f64) -> FormatChoice {
    choose_format_for(a, max_padding, RuleTarget::Cpu)
}

/// [`choose_format`] for the processor `target`.
///
/// ```
/// use krylov_wgpu::gpu::{RuleTarget, choose_format_for};
/// use krylov_wgpu::matrix::generators;
/// use krylov_wgpu::solvers::Format;
/// // 20,000 rows of 1 to 13 entries: irregular, and small.
/// let a = generators::from_spec::<f64>("random-spd:20000:7").unwrap();
/// assert_eq!(choose_format_for(&a, 10.0, RuleTarget::DiscreteGpu).format, Format::Csr);
/// assert_eq!(choose_format_for(&a, 10.0, RuleTarget::Cpu).format, Format::Sell);
/// ```
pub fn choose_format_for<T: Scalar>(
    a: &Csr<T>,
    max_padding: f64,
    target: RuleTarget,
) -> FormatChoice {
    choose_from_stats(&MatrixStats::of(a), max_padding, target)
}

/// [`choose_format_for`] on precomputed statistics.
pub fn choose_from_stats(
    stats: &MatrixStats,
    max_padding: f64,
    target: RuleTarget,
) -> FormatChoice {
    let nnz = stats.nnz.max(1) as f64;
    let dia_fill = (stats.nrows * stats.ndiag) as f64 / nnz;
    let latency_bound = target.latency_nnz().is_some_and(|limit| stats.nnz < limit);
    if stats.nnz > 0 && dia_fill <= 1.5_f64.min(max_padding) && !latency_bound {
        return FormatChoice {
            format: Format::Dia,
            reason: format!(
                "{} diagonals hold the non-zeros with {:.2} stored entries per non-zero (≤ 1.5)",
                stats.ndiag, dia_fill
            ),
        };
    }
    let [d2, d4, d8] = stats.density;
    for (f, nb, d, min) in [
        (Format::Bcsr8, 8, d8, 0.7),
        (Format::Bcsr4, 4, d4, 0.7),
        (Format::Bcsr2, 2, d2, 0.8),
    ] {
        if d >= min && 1.0 / d <= max_padding {
            return FormatChoice {
                format: f,
                reason: format!(
                    "{nb}×{nb} blocks are {:.0}% full (d2 {d2:.2}, d4 {d4:.2}, d8 {d8:.2}; ≥ {:.0}%)",
                    100.0 * d,
                    100.0 * min
                ),
            };
        }
    }
    if latency_bound {
        return FormatChoice {
            format: Format::Csr,
            reason: format!(
                "{} non-zeros (rows: mean {:.1}, max {}; {} diagonals) are a latency-bound SpMV \
                 on {} (under {}), where bytes do not rank the formats: CSR, the shortest \
                 kernel, and the most consistent there",
                stats.nnz,
                stats.row_len_mean,
                stats.row_len_max,
                stats.ndiag,
                target.describe(),
                target.latency_nnz().unwrap_or(0)
            ),
        };
    }
    let irregular = stats.row_len_max as f64 > 2.0 * stats.row_len_mean + 2.0
        || stats.row_len_std > 0.5 * stats.row_len_mean;
    if irregular {
        return FormatChoice {
            format: Format::Sell,
            reason: format!(
                "row lengths vary (mean {:.1}, max {}, std {:.1}): SELL-C-σ pads per slice of sorted rows, not to the longest row",
                stats.row_len_mean, stats.row_len_max, stats.row_len_std
            ),
        };
    }
    FormatChoice {
        format: Format::Csr,
        reason: format!(
            "uniform short rows (mean {:.1}, max {}), {} diagonals (DIA would store {:.1}× the non-zeros), no dense blocks (d2 {d2:.2}): CSR",
            stats.row_len_mean, stats.row_len_max, stats.ndiag, dia_fill
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Statistics of `nrows` rows with the given row lengths' mean, longest and spread, no
    /// dense blocks and many diagonals (so neither DIA nor BCSR applies).
    fn stats(nrows: usize, mean: f64, max: usize, std: f64) -> MatrixStats {
        MatrixStats {
            nrows,
            ncols: nrows,
            nnz: (nrows as f64 * mean) as usize,
            row_len_mean: mean,
            row_len_max: max,
            row_len_std: std,
            ndiag: nrows,
            density: [0.3, 0.1, 0.05],
        }
    }

    #[test]
    fn irregular_rows_go_to_csr_on_gpus_only_below_the_latency_bound() {
        let small = stats(20_000, 7.0, 13, 3.7); // 140,000 non-zeros
        let mid = stats(200_000, 11.0, 25, 6.0); // 2.2e6
        let large = stats(1_000_000, 7.0, 13, 3.7); // 7e6
        let pick = |s: &MatrixStats, t| choose_from_stats(s, 10.0, t).format;
        assert_eq!(pick(&small, RuleTarget::DiscreteGpu), Format::Csr);
        assert_eq!(pick(&mid, RuleTarget::DiscreteGpu), Format::Sell);
        assert_eq!(pick(&large, RuleTarget::DiscreteGpu), Format::Sell);
        // Other GPUs: a tenth of the bound, so the small matrix is already past it.
        assert_eq!(
            pick(&stats(10_000, 7.0, 13, 3.7), RuleTarget::OtherGpu),
            Format::Csr
        );
        assert_eq!(pick(&small, RuleTarget::OtherGpu), Format::Sell);
        // CPUs keep SELL at every size.
        for s in [&small, &mid, &large] {
            assert_eq!(pick(s, RuleTarget::Cpu), Format::Sell);
        }
        let why = choose_from_stats(&small, 10.0, RuleTarget::DiscreteGpu).reason;
        assert!(
            why.contains("latency-bound") && why.contains("140000"),
            "{why}"
        );
        // The bound is strict: exactly 1e6 non-zeros is past it.
        let edge = stats(100_000, 10.0, 30, 6.0);
        assert_eq!(edge.nnz, 1_000_000);
        assert_eq!(pick(&edge, RuleTarget::DiscreteGpu), Format::Sell);
    }

    /// Five full diagonals (DIA's case) of `nrows` rows.
    fn banded(nrows: usize) -> MatrixStats {
        MatrixStats {
            ndiag: 5,
            ..stats(nrows, 5.0, 5, 0.0)
        }
    }

    /// Full 4×4 blocks with irregular rows: BCSR 4×4 comes before the row rule.
    fn blocks(nrows: usize) -> MatrixStats {
        MatrixStats {
            density: [1.0, 0.9, 0.4],
            ..stats(nrows, 12.0, 40, 8.0)
        }
    }

    #[test]
    fn large_matrices_choose_alike_on_every_target() {
        let targets = [
            RuleTarget::DiscreteGpu,
            RuleTarget::OtherGpu,
            RuleTarget::Cpu,
        ];
        // Uniform short rows: CSR; full diagonals: DIA; dense blocks: BCSR 4×4.
        let uniform = stats(500_000, 7.0, 7, 0.0);
        let pick = |s: &MatrixStats, t| choose_from_stats(s, 10.0, t).format;
        for t in targets {
            assert_eq!(pick(&uniform, t), Format::Csr, "{t:?}");
            assert_eq!(pick(&banded(500_000), t), Format::Dia, "{t:?}");
            assert_eq!(pick(&blocks(500_000), t), Format::Bcsr4, "{t:?}");
        }
    }

    #[test]
    fn small_matrices_go_to_csr_on_gpus_unless_their_blocks_are_dense() {
        let pick = |s: &MatrixStats, t| choose_from_stats(s, 10.0, t).format;
        for t in [RuleTarget::DiscreteGpu, RuleTarget::OtherGpu] {
            let c = choose_from_stats(&banded(5000), 10.0, t);
            assert_eq!(c.format, Format::Csr, "{t:?}");
            assert!(c.reason.contains("latency-bound"), "{}", c.reason);
            assert_eq!(pick(&blocks(5000), t), Format::Bcsr4, "{t:?}");
        }
        assert_eq!(pick(&banded(5000), RuleTarget::Cpu), Format::Dia);
        assert_eq!(pick(&blocks(5000), RuleTarget::Cpu), Format::Bcsr4);
    }

    #[test]
    fn device_types_map_to_targets() {
        assert_eq!(
            RuleTarget::from_device_type("DiscreteGpu"),
            RuleTarget::DiscreteGpu
        );
        for other in ["IntegratedGpu", "VirtualGpu", "Other"] {
            assert_eq!(RuleTarget::from_device_type(other), RuleTarget::OtherGpu);
        }
        assert_eq!(RuleTarget::from_device_type("Cpu"), RuleTarget::Cpu);
    }
}
