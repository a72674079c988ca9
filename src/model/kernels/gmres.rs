//! GMRES(m)'s plan: a whole cycle of m steps ([`super::iteration_plan`] for
//! [`Method::Gmres`](crate::base::Method::Gmres)).

use super::{Curve, IterationPlan, KernelCost, SpmvBytes};
use crate::base::{CheckMode, Variant};

/// GMRES(m)'s cycle of m steps in `device` mode, without a preconditioner, classical
/// Gram–Schmidt (the solvers' default). Bytes per launch (v = n·s, one vector pass; step i
/// reads the i − 1 basis vectors before its new one):
///
/// | launch | bytes |
/// |---|---|
/// | `gmres_residual` (r = b − Ax, ‖r‖²) | product + b read, r written: 2v |
/// | pipelined `gmres_spmv_dot` (⟨v_{i−1}, w⟩, ‖w‖²) | product + v_{i−1}'s row: v (step 1 also r → v_0: +2v) |
/// | pipelined `gmres_basis_dots` (i ≥ 3) | the i − 2 vectors + w once per chunk of 8 |
/// | pipelined `gmres_gs_update` (i ≥ 2) | the i − 1 vectors + w read and written |
/// | pipelined `gmres_normalize` | w read, v_i written, r read (ξ_i): 3v |
/// | fused `gmres_scale_spmv_dots` | product + ⟨w_j, w⟩ over the rows it wrote: (i − 1)v (step 1: r → v_0, 2v) |
/// | fused `gmres_gs_update` (SCALED, XI) | the i − 1 vectors + w read and written + r: (i + 2)v (step 1: w, r: 2v) |
/// | `gmres_p1_step` (closes step p = i − 1) | product of u_p + v_p from u_p and the p − 1 v's, u_i from the p − 1 u's, r, v_{p−1} rescaled: (2(p − 1) + 5)v (step 1: r → v_0, 3v) |
/// | `gmres_update_x` | the m basis vectors + x read and written: (m + 2)v |
pub(super) fn cycle_plan(
    variant: Variant,
    mode: CheckMode,
    n: usize,
    spmv: SpmvBytes,
    s: usize,
    m: usize,
) -> Option<IterationPlan> {
    if mode != CheckMode::Device
        || m == 0
        || (variant == Variant::P1 && m > crate::solvers::gmres::P1_MAX_RESTART)
    {
        return None;
    }
    let v = (n * s) as f64;
    let product = spmv.with_gathers(1.0);
    let k = |name, curve, bytes| KernelCost {
        name,
        curve,
        bytes,
        gathers: if curve == Curve::Matrix { 1.0 } else { 0.0 },
    };
    let idle = |name| k(name, Curve::Launch, 0.0);
    let mut ks = vec![k("gmres_residual", Curve::Matrix, product + 2.0 * v)];
    for i in 1..=m {
        let before = (i - 1) as f64; // basis vectors before the new one
        match variant {
            Variant::Pipelined if i == 1 => {
                ks.push(k("gmres_spmv_dot", Curve::Matrix, product + 3.0 * v));
                ks.push(k("gmres_normalize", Curve::Streaming, 3.0 * v));
            }
            Variant::Pipelined => {
                ks.push(k("gmres_spmv_dot", Curve::Matrix, product + v));
                let count = (i - 2) as f64;
                ks.push(match i {
                    2 => idle("gmres_basis_dots"),
                    _ => k(
                        "gmres_basis_dots",
                        Curve::Streaming,
                        (count + (count / 8.0).ceil()) * v,
                    ),
                });
                ks.push(k("gmres_gs_update", Curve::Streaming, (before + 2.0) * v));
                ks.push(k("gmres_normalize", Curve::Streaming, 3.0 * v));
            }
            Variant::Fused if i == 1 => {
                ks.push(k("gmres_scale_spmv_dots", Curve::Matrix, product + 2.0 * v));
                ks.push(k("gmres_gs_update", Curve::Streaming, 2.0 * v));
            }
            Variant::Fused => {
                ks.push(k(
                    "gmres_scale_spmv_dots",
                    Curve::Matrix,
                    product + before * v,
                ));
                ks.push(k("gmres_gs_update", Curve::Streaming, (before + 3.0) * v));
            }
            Variant::P1 if i == 1 => ks.push(k("gmres_p1_step", Curve::Matrix, product + 3.0 * v)),
            Variant::P1 => {
                let p = before; // the step this launch closes
                ks.push(k(
                    "gmres_p1_step",
                    Curve::Matrix,
                    product + (2.0 * (p - 1.0) + 5.0) * v,
                ));
            }
            _ => return None,
        }
    }
    match variant {
        Variant::Fused => ks.push(idle("gmres_scale_spmv_dots")),
        Variant::P1 => ks.push(idle("gmres_p1_step")),
        _ => {}
    }
    ks.push(k("gmres_update_x", Curve::Streaming, (m as f64 + 2.0) * v));
    Some(IterationPlan {
        kernels: ks,
        round_trips: 1.0 / m as f64,
        iterations: m as f64,
    })
}

#[cfg(test)]
mod tests {
    use super::super::{Shape, iteration_plan};
    use super::*;
    use crate::base::Method;

    fn gmres(variant: Variant, m: usize) -> IterationPlan {
        // 100 rows of f32 (v = 400 bytes), a product of 1000 bytes.
        iteration_plan(
            Method::Gmres,
            variant,
            CheckMode::Device,
            100,
            SpmvBytes::plain(1000.0),
            4,
            Shape {
                batch: 7,
                restart: m,
            },
        )
        .unwrap()
    }

    #[test]
    fn gmres_cycles_launch_what_the_solvers_record() {
        // Residual + the steps + the closing launch + the update: pipelined 4m − 2 steps'
        // launches, fused 2m + 1, p(1) m + 1 (src/solvers/gmres/mod.rs).
        for (variant, launches) in [
            (Variant::Pipelined, 4 * 30 - 2),
            (Variant::Fused, 2 * 30 + 1),
            (Variant::P1, 30 + 1),
        ] {
            let plan = gmres(variant, 30);
            assert_eq!(plan.kernels.len(), launches + 2, "{variant}");
            assert_eq!(plan.iterations, 30.0);
            assert_eq!(plan.round_trips, 1.0 / 30.0);
            assert_eq!(plan.kernels[0].name, "gmres_residual");
            assert_eq!(plan.kernels.last().unwrap().name, "gmres_update_x");
        }
        assert_eq!(gmres(Variant::Pipelined, 30).dispatches(), 4.0);
        assert_eq!(gmres(Variant::Fused, 30).dispatches(), 63.0 / 30.0);
        assert_eq!(gmres(Variant::P1, 10).dispatches(), 1.3);
        // Not modelled: paper mode, CGS-free variants, p(1) beyond its longest cycle.
        let plan = |variant, mode, m| {
            iteration_plan(
                Method::Gmres,
                variant,
                mode,
                100,
                SpmvBytes::plain(1000.0),
                4,
                Shape {
                    batch: 1,
                    restart: m,
                },
            )
        };
        assert!(plan(Variant::Fused, CheckMode::Paper, 30).is_none());
        assert!(plan(Variant::Classical, CheckMode::Device, 30).is_none());
        assert!(plan(Variant::Workgroup, CheckMode::Device, 30).is_none());
        let longest = crate::solvers::gmres::P1_MAX_RESTART;
        assert!(plan(Variant::P1, CheckMode::Device, longest).is_some());
        assert!(plan(Variant::P1, CheckMode::Device, longest + 1).is_none());
    }

    #[test]
    fn a_gmres_step_reads_the_basis_before_it() {
        // m = 3, v = 400 bytes, product 1000 bytes.
        let p = gmres(Variant::Pipelined, 3);
        let bytes: Vec<(&str, f64)> = p.kernels.iter().map(|k| (k.name, k.bytes)).collect();
        assert_eq!(
            bytes,
            vec![
                ("gmres_residual", 1000.0 + 800.0),
                ("gmres_spmv_dot", 1000.0 + 1200.0),
                ("gmres_normalize", 1200.0),
                ("gmres_spmv_dot", 1000.0 + 400.0),
                ("gmres_basis_dots", 0.0), // idle in step 2
                ("gmres_gs_update", 3.0 * 400.0),
                ("gmres_normalize", 1200.0),
                ("gmres_spmv_dot", 1000.0 + 400.0),
                ("gmres_basis_dots", 2.0 * 400.0), // v_1 and w (one chunk)
                ("gmres_gs_update", 4.0 * 400.0),
                ("gmres_normalize", 1200.0),
                ("gmres_update_x", 5.0 * 400.0),
            ]
        );
        assert_eq!(p.kernels[4].curve, Curve::Launch);
        // The idle launch is no sample: basis_dots's one launch with data, 800 bytes.
        assert_eq!(p.launches_of("gmres_basis_dots"), (1, 800.0));
        assert_eq!(p.launches_of("gmres_normalize"), (3, 1200.0));
        let f = gmres(Variant::Fused, 3);
        let names: Vec<&str> = f.kernels.iter().map(|k| k.name).collect();
        assert_eq!(
            names,
            [
                "gmres_residual",
                "gmres_scale_spmv_dots",
                "gmres_gs_update",
                "gmres_scale_spmv_dots",
                "gmres_gs_update",
                "gmres_scale_spmv_dots",
                "gmres_gs_update",
                "gmres_scale_spmv_dots",
                "gmres_update_x"
            ]
        );
        // Step 3's product reads w_1 and w_2 where it writes; its update the two, w and r.
        assert_eq!(f.kernels[5].bytes, 1000.0 + 800.0);
        assert_eq!(f.kernels[6].bytes, 5.0 * 400.0);
        assert_eq!(f.kernels[7].curve, Curve::Launch);
        assert_eq!(f.launches_of("gmres_scale_spmv_dots").0, 3);
        // p(1): step 3 closes step 2: u_2 and v_1 → v_2, u_1 → u_3, r, v_1 rescaled.
        let p1 = gmres(Variant::P1, 3);
        assert_eq!(p1.kernels[3].bytes, 1000.0 + 7.0 * 400.0);
        assert_eq!(
            p1.bytes(),
            p1.kernels.iter().map(|k| k.bytes).sum::<f64>() / 3.0
        );
    }
}
