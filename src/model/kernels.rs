//! The kernels of one iteration of each modelled solver variant (no preconditioner), the
//! bytes each moves and the host round trips per iteration.
//!
//! The launch lists are those `record_iteration` / `paper_loop` of the solver folders record
//! (`tests/gpu_cg/counts.rs` and `tests/gpu_bicgstab/counts.rs` assert the same counts on
//! real solves; `tests/model.rs` checks these lists against the dispatch counters):
//!
//! | method | variant | mode | launches | round trips |
//! |---|---|---|---|---|
//! | CG | pipelined | both | `update_cg`, `spmv_dot_cg` | paper 1, device 1/batch |
//! | CG | classical | device | spmv, dot, finish, axpy, axpy, dot, finish, xpay | 1/batch |
//! | CG | classical | paper | spmv, dot, axpy, axpy, dot, xpay | 2 |
//! | BiCGStab | pipelined | both | `spmv_dot_bicgstab_p`, `update_s`, `spmv_dot_bicgstab_s`, `update_xrp` | paper 1, device 1/batch |
//! | BiCGStab | classical | device | 2 spmv, 7 dot, 3 finish, 5 axpy, 1 xpay | 1/batch |
//! | BiCGStab | classical | paper | 2 spmv, 7 dot, 5 axpy, 1 xpay | 4 |
//!
//! Vector bytes: an n-vector read or written costs `n·s`; the reductions' partial sums
//! (≤ 1024 per inner product) are left out. GMRES, BiCG and Jacobi are not modelled.
//! The names are those of the kernels (`gpu::shader::KERNELS`), which GPU timestamps report:
//! calibration fits one curve per name (per name and format for the kernels with A).

use crate::base::{CheckMode, Method, Variant};

/// How a launch's time is looked up in the profile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curve {
    /// Vector passes (updates, inner products): the kernel's own curve, keyed by its name.
    Streaming,
    /// A kernel that multiplies by A: its curve for the matrix's format, keyed
    /// `name:format` ([`curve_key`]).
    Matrix,
    /// A one-workgroup finishing launch (`dot_finish`, `bicgstab_finish`): a constant.
    Finish,
}

/// The profile key of a launch's curve: its name, `name:format` for [`Curve::Matrix`].
pub fn curve_key(kernel: &KernelCost, format: crate::base::Format) -> String {
    match kernel.curve {
        Curve::Matrix => format!("{}:{}", kernel.name, format.as_str()),
        _ => kernel.name.to_string(),
    }
}

/// One launch of an iteration.
#[derive(Debug, Clone, PartialEq)]
pub struct KernelCost {
    pub name: &'static str,
    pub curve: Curve,
    /// Bytes the launch moves (the SpMV's own bytes included for [`Curve::Matrix`]).
    pub bytes: f64,
}

/// What one iteration launches and how often it waits for the host.
#[derive(Debug, Clone, PartialEq)]
pub struct IterationPlan {
    pub kernels: Vec<KernelCost>,
    /// Submit-and-read round trips per iteration (`device` mode: one per batch).
    pub round_trips: f64,
}

impl IterationPlan {
    /// Launches per iteration.
    pub fn dispatches(&self) -> usize {
        self.kernels.len()
    }

    /// Bytes per iteration over all launches.
    pub fn bytes(&self) -> f64 {
        self.kernels.iter().map(|k| k.bytes).sum()
    }
}

/// The variants the model knows, as (method, variant).
pub const MODELLED: [(Method, Variant); 4] = [
    (Method::Cg, Variant::Pipelined),
    (Method::Cg, Variant::Classical),
    (Method::Bicgstab, Variant::Pipelined),
    (Method::Bicgstab, Variant::Classical),
];

/// The plan of one iteration on a matrix with `n` rows whose SpMV moves `spmv_bytes`, with
/// `s`-byte values; `batch` iterations per submit in `device` mode. `None` for a method the
/// model does not cover.
pub fn iteration_plan(
    method: Method,
    variant: Variant,
    mode: CheckMode,
    n: usize,
    spmv_bytes: u64,
    s: usize,
    batch: usize,
) -> Option<IterationPlan> {
    let v = (n * s) as f64;
    let spmv = spmv_bytes as f64;
    let k = |name, curve, bytes| KernelCost { name, curve, bytes };
    let device = mode == CheckMode::Device;
    let per_batch = 1.0 / batch.max(1) as f64;
    let finish = |kernels: &mut Vec<KernelCost>, name| {
        if device {
            kernels.push(k(name, Curve::Finish, 0.0));
        }
    };
    let (kernels, paper_trips) = match (method, variant) {
        (Method::Cg, Variant::Pipelined) => (
            vec![
                // reads x, r, p, Ap; writes x, r, p
                k("update_cg", Curve::Streaming, 7.0 * v),
                k("spmv_dot_cg", Curve::Matrix, spmv),
            ],
            1.0,
        ),
        (Method::Cg, Variant::Classical) => {
            let mut ks = vec![
                k("spmv", Curve::Matrix, spmv),
                k("dot", Curve::Streaming, 2.0 * v),
            ];
            finish(&mut ks, "dot_finish");
            ks.push(k("axpy", Curve::Streaming, 3.0 * v));
            ks.push(k("axpy", Curve::Streaming, 3.0 * v));
            ks.push(k("dot", Curve::Streaming, v));
            finish(&mut ks, "dot_finish");
            ks.push(k("xpay", Curve::Streaming, 3.0 * v));
            (ks, 2.0)
        }
        (Method::Bicgstab, Variant::Pipelined) => (
            vec![
                // Ap = A·p, ⟨Ap, r0*⟩: + r0*
                k("spmv_dot_bicgstab_p", Curve::Matrix, spmv + v),
                // s = r − αAp: reads r, Ap, writes s
                k("update_s_bicgstab", Curve::Streaming, 3.0 * v),
                // As = A·s, ⟨As,s⟩, ⟨As,As⟩, ⟨As,r0*⟩: + r0*
                k("spmv_dot_bicgstab_s", Curve::Matrix, spmv + v),
                // x, r, p updates: reads x, p, s, As, Ap, r; writes x, r, p
                k("update_xrp_bicgstab", Curve::Streaming, 9.0 * v),
            ],
            1.0,
        ),
        (Method::Bicgstab, Variant::Classical) => {
            let mut ks = vec![k("spmv", Curve::Matrix, spmv)];
            ks.push(k("dot", Curve::Streaming, 2.0 * v));
            finish(&mut ks, "bicgstab_finish");
            ks.push(k("axpy", Curve::Streaming, 3.0 * v));
            ks.push(k("spmv", Curve::Matrix, spmv));
            ks.extend((0..2).map(|_| k("dot", Curve::Streaming, 2.0 * v)));
            finish(&mut ks, "bicgstab_finish");
            ks.extend((0..3).map(|_| k("axpy", Curve::Streaming, 3.0 * v)));
            ks.extend((0..4).map(|_| k("dot", Curve::Streaming, 2.0 * v)));
            finish(&mut ks, "bicgstab_finish");
            ks.push(k("axpy", Curve::Streaming, 3.0 * v));
            ks.push(k("xpay", Curve::Streaming, 3.0 * v));
            (ks, 4.0)
        }
        _ => return None,
    };
    Some(IterationPlan {
        kernels,
        round_trips: if device { per_batch } else { paper_trips },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(method: Method, variant: Variant, mode: CheckMode) -> usize {
        iteration_plan(method, variant, mode, 100, 1000, 4, 10)
            .unwrap()
            .dispatches()
    }

    #[test]
    fn launch_counts_are_those_the_solver_tests_assert() {
        use CheckMode::{Device, Paper};
        use Method::{Bicgstab, Cg};
        use Variant::{Classical, Pipelined};
        assert_eq!(count(Cg, Pipelined, Device), 2);
        assert_eq!(count(Cg, Pipelined, Paper), 2);
        assert_eq!(count(Cg, Classical, Device), 8);
        assert_eq!(count(Cg, Classical, Paper), 6);
        assert_eq!(count(Bicgstab, Pipelined, Device), 4);
        assert_eq!(count(Bicgstab, Pipelined, Paper), 4);
        assert_eq!(count(Bicgstab, Classical, Device), 18);
        assert_eq!(count(Bicgstab, Classical, Paper), 15);
        assert!(iteration_plan(Method::Gmres, Classical, Device, 1, 1, 4, 1).is_none());
    }

    #[test]
    fn bytes_are_the_spmv_plus_the_vector_passes() {
        // n = 100, f32: one vector pass = 400 bytes.
        let p = iteration_plan(
            Method::Cg,
            Variant::Pipelined,
            CheckMode::Device,
            100,
            1000,
            4,
            10,
        )
        .unwrap();
        assert_eq!(p.bytes(), 1000.0 + 7.0 * 400.0);
        assert_eq!(p.round_trips, 0.1);
        let c = iteration_plan(
            Method::Cg,
            Variant::Classical,
            CheckMode::Paper,
            100,
            1000,
            4,
            10,
        )
        .unwrap();
        // dot 2 + axpy 3 + axpy 3 + dot 1 + xpay 3 = 12 passes.
        assert_eq!(c.bytes(), 1000.0 + 12.0 * 400.0);
        assert_eq!(c.round_trips, 2.0);
        let b = iteration_plan(
            Method::Bicgstab,
            Variant::Classical,
            CheckMode::Device,
            100,
            1000,
            8,
            1,
        )
        .unwrap();
        // 2 SpMV; 7 dots × 2 + 5 axpy × 3 + xpay 3 = 32 passes of 800 bytes.
        assert_eq!(b.bytes(), 2000.0 + 32.0 * 800.0);
        assert_eq!(b.round_trips, 1.0);
    }
}
