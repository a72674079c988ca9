//! The kernels of one iteration of each modelled solver variant (no preconditioner), the
//! bytes each moves and the host round trips per iteration.
//!
//! The launch lists are those `record_iteration` / `paper_loop` of the solver folders record
//! (`tests/gpu_cg/counts.rs`, `tests/gpu_cg_fused.rs` and `tests/gpu_bicgstab/counts.rs`
//! assert the same counts on real solves; `tests/model.rs` checks these lists against the
//! dispatch counters):
//!
//! | method | variant | mode | launches | round trips |
//! |---|---|---|---|---|
//! | CG | pipelined | both | `update_cg`, `spmv_dot_cg` | paper 1, device 1/batch |
//! | CG | classical | device | spmv, dot, finish, axpy, axpy, dot, finish, xpay | 1/batch |
//! | CG | classical | paper | spmv, dot, axpy, axpy, dot, xpay | 2 |
//! | CG | fused | both | `update_spmv_dot_cg` | paper 1, device 1/batch |
//! | BiCGStab | pipelined | both | `spmv_dot_bicgstab_p`, `update_s_bicgstab`, `spmv_dot_bicgstab_s`, `update_xrp_bicgstab` | paper 1, device 1/batch |
//! | BiCGStab | classical | device | 2 spmv, 7 dot, 3 finish, 5 axpy, 1 xpay | 1/batch |
//! | BiCGStab | classical | paper | 2 spmv, 7 dot, 5 axpy, 1 xpay | 4 |
//! | GMRES(m) | pipelined | device | per cycle: `gmres_residual`, step 1: `gmres_spmv_dot`, `gmres_normalize`; step i ≥ 2: `gmres_spmv_dot`, `gmres_basis_dots` (idle in step 2), `gmres_gs_update`, `gmres_normalize`; `gmres_update_x` | 1 per cycle |
//! | GMRES(m) | fused | device | per cycle: `gmres_residual`, per step `gmres_scale_spmv_dots`, `gmres_gs_update`, the closing `gmres_scale_spmv_dots`, `gmres_update_x` | 1 per cycle |
//! | GMRES(m) | p1 | device | per cycle: `gmres_residual`, per step `gmres_p1_step`, the closing `gmres_p1_step`, `gmres_update_x` | 1 per cycle |
//!
//! GMRES's plan is a whole cycle of m steps (`IterationPlan::iterations` = m): step i's
//! Gram–Schmidt reads the i − 1 basis vectors before it, so the cost of a step grows through
//! the cycle, and the restart's residual, the update of x and the cycle's read-back are paid
//! once per m steps; per iteration is the cycle over m, what a timed loop of whole cycles
//! measures. The launches that move nothing of their own (pipelined's idle
//! `gmres_basis_dots` of step 2, the closing launch of fused and p(1)-GMRES) are
//! [`Curve::Launch`]: a dispatch, their time inside their kernel's curve (calibration
//! divides a kernel's time by its launches that move data). Classical, one-workgroup and
//! CA-GMRES, CGS2 and `paper` mode are not modelled (the rules choose for them).
//!
//! Vector bytes: an n-vector read or written costs `n·s`; the reductions' partial sums
//! (≤ 1024 per inner product) are left out. A product with A costs what [`SpmvBytes`] says:
//! its layout's bytes with one value of x per stored entry, plus, for fused CG, whose product
//! forms p' = D⁻¹(r − αAp) + βp wherever it reads it, two more gathered vectors (r and Ap
//! beside p) — and each gathered vector its excess sectors ([`super::gather`]). BiCG and
//! Jacobi are not modelled.
//! The names are those of the kernels (`gpu::shader::KERNELS`), which GPU timestamps report:
//! calibration fits one curve per name (per name and format for the kernels with A).

use crate::base::{CheckMode, Method, Variant};

mod gmres;

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
    /// A launch of a kernel named elsewhere in the plan that moves nothing of its own
    /// (GMRES's closing launches, pipelined GMRES's idle step-2 inner products): one
    /// dispatch; its GPU time is inside the curve of its name's other launches.
    Launch,
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
    /// Vectors the launch gathers at A's stored entries (1 for a product, 3 for fused CG's,
    /// 0 for a vector pass): the multiple of the layout's gather excess in `bytes`.
    pub gathers: f64,
}

/// What one product with A moves, as the model counts it.
///
/// ```
/// use krylov_wgpu::model::kernels::SpmvBytes;
/// // A layout whose SpMV moves 1000 bytes, 800 of them x's one value per entry,
/// // and 100 bytes of excess sectors weighted by γ = 0.5.
/// // A product gathering three vectors weighs its excess by its own γ, 2.
/// let b = SpmvBytes { bytes: 1000.0, gathered: 800.0, excess: 100.0, weight: 0.5, multi_weight: 2.0 };
/// assert_eq!(b.with_gathers(1.0), 1050.0);
/// assert_eq!(b.with_gathers(3.0), 1000.0 + 2.0 * 800.0 + 3.0 * 200.0);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpmvBytes {
    /// The layout's bytes of one SpMV ([`super::layout::SpmvLayout::spmv_bytes`]: index
    /// data, stored values, one value of x per stored entry, y).
    pub bytes: f64,
    /// One value per stored entry: what each further gathered vector adds.
    pub gathered: f64,
    /// x's sectors beyond one value per stored entry ([`super::gather`]).
    pub excess: f64,
    /// The profile's weight γ of the excess (0 while calibrating, which fits it).
    pub weight: f64,
    /// γ of a product that gathers several vectors ([`super::gather::weight_key`]).
    pub multi_weight: f64,
}

impl SpmvBytes {
    /// The bytes of `layout`'s product with `s`-byte values and gather weights `weight` (one
    /// vector gathered) and `multi_weight` (several).
    pub fn of(
        layout: &super::layout::SpmvLayout,
        s: usize,
        weight: f64,
        multi_weight: f64,
    ) -> Self {
        SpmvBytes {
            bytes: layout.spmv_bytes(s) as f64,
            gathered: (layout.stored * s as u64) as f64,
            excess: layout.gather_excess_bytes(s) as f64,
            weight,
            multi_weight,
        }
    }

    /// Bytes only (no gathered entries, no excess): for tests and hand counts.
    pub fn plain(bytes: f64) -> Self {
        SpmvBytes {
            bytes,
            gathered: 0.0,
            excess: 0.0,
            weight: 0.0,
            multi_weight: 0.0,
        }
    }

    /// The bytes of a product that gathers `vectors` vectors at the stored entries.
    pub fn with_gathers(&self, vectors: f64) -> f64 {
        let weight = if vectors > 1.0 {
            self.multi_weight
        } else {
            self.weight
        };
        self.bytes + (vectors - 1.0) * self.gathered + vectors * weight * self.excess
    }
}

/// What `iterations` iterations launch and how often they wait for the host: one
/// iteration for CG and BiCGStab, a cycle of m steps for GMRES(m).
#[derive(Debug, Clone, PartialEq)]
pub struct IterationPlan {
    pub kernels: Vec<KernelCost>,
    /// Submit-and-read round trips per iteration (`device` mode: one per batch, GMRES: one
    /// per cycle).
    pub round_trips: f64,
    /// The iterations `kernels` cover (1, or GMRES's restart length m).
    pub iterations: f64,
}

impl IterationPlan {
    /// Launches per iteration.
    pub fn dispatches(&self) -> f64 {
        self.kernels.len() as f64 / self.iterations
    }

    /// Bytes per iteration over all launches.
    pub fn bytes(&self) -> f64 {
        self.kernels.iter().map(|k| k.bytes).sum::<f64>() / self.iterations
    }

    /// Launches of kernel `name` in the plan that move data (not [`Curve::Launch`]) and
    /// their mean bytes: what one timestamped launch of it is a sample of.
    pub fn launches_of(&self, name: &str) -> (usize, f64) {
        let same: Vec<f64> = self
            .kernels
            .iter()
            .filter(|k| k.name == name && k.curve != Curve::Launch)
            .map(|k| k.bytes)
            .collect();
        let c = same.len();
        (c, same.iter().sum::<f64>() / c.max(1) as f64)
    }
}

/// The variants the model knows, as (method, variant).
pub const MODELLED: [(Method, Variant); 8] = [
    (Method::Cg, Variant::Pipelined),
    (Method::Cg, Variant::Classical),
    (Method::Cg, Variant::Fused),
    (Method::Bicgstab, Variant::Pipelined),
    (Method::Bicgstab, Variant::Classical),
    (Method::Gmres, Variant::Pipelined),
    (Method::Gmres, Variant::Fused),
    (Method::Gmres, Variant::P1),
];

/// How a solve is shaped beyond its method and variant: iterations per submit (`device`
/// mode) and GMRES's restart length.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub batch: usize,
    pub restart: usize,
}

impl Shape {
    /// `batch` iterations per submit, GMRES(30) (the solvers' default restart).
    pub fn batch(batch: usize) -> Self {
        Shape { batch, restart: 30 }
    }
}

/// The plan of one iteration (GMRES: one cycle) on a matrix with `n` rows whose SpMV moves
/// `spmv`, with `s`-byte values. `None` for a method, variant or mode the model does not
/// cover (and p(1)-GMRES beyond its longest cycle).
pub fn iteration_plan(
    method: Method,
    variant: Variant,
    mode: CheckMode,
    n: usize,
    spmv: SpmvBytes,
    s: usize,
    shape: Shape,
) -> Option<IterationPlan> {
    if method == Method::Gmres {
        return gmres::cycle_plan(variant, mode, n, spmv, s, shape.restart);
    }
    let batch = shape.batch;
    let v = (n * s) as f64;
    let k = |name, curve, bytes| KernelCost {
        name,
        curve,
        bytes,
        gathers: if curve == Curve::Matrix { 1.0 } else { 0.0 },
    };
    let spmv_one = spmv.with_gathers(1.0);
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
                k("spmv_dot_cg", Curve::Matrix, spmv_one),
            ],
            1.0,
        ),
        (Method::Cg, Variant::Classical) => {
            let mut ks = vec![
                k("spmv", Curve::Matrix, spmv_one),
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
        (Method::Cg, Variant::Fused) => (
            vec![KernelCost {
                // The product gathers r, Ap and p to form p' where it reads it; its own rows
                // read and write x and write r' and p' (Ap' is the product's y).
                name: "update_spmv_dot_cg",
                curve: Curve::Matrix,
                bytes: spmv.with_gathers(3.0) + 4.0 * v,
                gathers: 3.0,
            }],
            1.0,
        ),
        (Method::Bicgstab, Variant::Pipelined) => (
            vec![
                // Ap = A·p, ⟨Ap, r0*⟩: + r0*
                k("spmv_dot_bicgstab_p", Curve::Matrix, spmv_one + v),
                // s = r − αAp: reads r, Ap, writes s
                k("update_s_bicgstab", Curve::Streaming, 3.0 * v),
                // As = A·s, ⟨As,s⟩, ⟨As,As⟩, ⟨As,r0*⟩: + r0*
                k("spmv_dot_bicgstab_s", Curve::Matrix, spmv_one + v),
                // x, r, p updates: reads x, p, s, As, Ap, r; writes x, r, p
                k("update_xrp_bicgstab", Curve::Streaming, 9.0 * v),
            ],
            1.0,
        ),
        (Method::Bicgstab, Variant::Classical) => {
            let mut ks = vec![k("spmv", Curve::Matrix, spmv_one)];
            ks.push(k("dot", Curve::Streaming, 2.0 * v));
            finish(&mut ks, "bicgstab_finish");
            ks.push(k("axpy", Curve::Streaming, 3.0 * v));
            ks.push(k("spmv", Curve::Matrix, spmv_one));
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
        iterations: 1.0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(method: Method, variant: Variant, mode: CheckMode) -> f64 {
        iteration_plan(
            method,
            variant,
            mode,
            100,
            SpmvBytes::plain(1000.0),
            4,
            Shape::batch(10),
        )
        .unwrap()
        .dispatches()
    }

    #[test]
    fn launch_counts_are_those_the_solver_tests_assert() {
        use CheckMode::{Device, Paper};
        use Method::{Bicgstab, Cg};
        use Variant::{Classical, Fused, Pipelined};
        assert_eq!(count(Cg, Pipelined, Device), 2.0);
        assert_eq!(count(Cg, Pipelined, Paper), 2.0);
        assert_eq!(count(Cg, Classical, Device), 8.0);
        assert_eq!(count(Cg, Classical, Paper), 6.0);
        assert_eq!(count(Cg, Fused, Device), 1.0);
        assert_eq!(count(Cg, Fused, Paper), 1.0);
        assert_eq!(count(Bicgstab, Pipelined, Device), 4.0);
        assert_eq!(count(Bicgstab, Pipelined, Paper), 4.0);
        assert_eq!(count(Bicgstab, Classical, Device), 18.0);
        assert_eq!(count(Bicgstab, Classical, Paper), 15.0);
        assert!(
            iteration_plan(
                Method::Gmres,
                Classical,
                Device,
                1,
                SpmvBytes::plain(1.0),
                4,
                Shape::batch(1)
            )
            .is_none()
        );
    }

    #[test]
    fn bytes_are_the_spmv_plus_the_vector_passes() {
        // n = 100, f32: one vector pass = 400 bytes.
        let p = iteration_plan(
            Method::Cg,
            Variant::Pipelined,
            CheckMode::Device,
            100,
            SpmvBytes::plain(1000.0),
            4,
            Shape::batch(10),
        )
        .unwrap();
        assert_eq!(p.bytes(), 1000.0 + 7.0 * 400.0);
        assert_eq!(p.round_trips, 0.1);
        let c = iteration_plan(
            Method::Cg,
            Variant::Classical,
            CheckMode::Paper,
            100,
            SpmvBytes::plain(1000.0),
            4,
            Shape::batch(10),
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
            SpmvBytes::plain(1000.0),
            8,
            Shape::batch(1),
        )
        .unwrap();
        // 2 SpMV; 7 dots × 2 + 5 axpy × 3 + xpay 3 = 32 passes of 800 bytes.
        assert_eq!(b.bytes(), 2000.0 + 32.0 * 800.0);
        assert_eq!(b.round_trips, 1.0);
    }

    #[test]
    fn fused_cg_gathers_three_vectors_and_streams_four() {
        // 100 rows, f32 (one vector pass = 400 bytes); 500 stored entries (2000 bytes of
        // one gathered vector), 300 bytes of excess sectors per gathered vector at γ = 0.5.
        let spmv = SpmvBytes {
            bytes: 5000.0,
            gathered: 2000.0,
            excess: 300.0,
            weight: 0.5,
            multi_weight: 0.5,
        };
        let plan = |variant| {
            iteration_plan(
                Method::Cg,
                variant,
                CheckMode::Device,
                100,
                spmv,
                4,
                Shape::batch(10),
            )
            .unwrap()
        };
        let fused = plan(Variant::Fused);
        assert_eq!(fused.kernels.len(), 1);
        assert_eq!(fused.kernels[0].gathers, 3.0);
        assert_eq!(
            fused.bytes(),
            5000.0 + 2.0 * 2000.0 + 3.0 * 150.0 + 4.0 * 400.0
        );
        assert_eq!(fused.round_trips, 0.1);
        // Pipelined CG: one gathered vector in spmv_dot_cg, seven passes in update_cg.
        let pipelined = plan(Variant::Pipelined);
        assert_eq!(pipelined.kernels[1].gathers, 1.0);
        assert_eq!(pipelined.kernels[0].gathers, 0.0);
        assert_eq!(pipelined.bytes(), 5000.0 + 150.0 + 7.0 * 400.0);
    }
}
