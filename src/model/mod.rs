//! The performance model of paper 003 (issue 18): calibrate a device once, then predict the
//! time per iteration of every storage format, precision and solver variant on a matrix
//! without running the solver, and let `--format auto` / `--variant auto` take the fastest.
//!
//! ```text
//!   t(kernel)    = x / B(x) + t_d [+ τ_f · L]     x = bytes the launch moves
//!   B(x)         = ν / (1 + exp(−(log₂ x − μ)/σ))  (paper 003, Eq. 3; one curve per kind)
//!   t(iteration) = Σ_kernels t(kernel) + launches · r_m(n) + round_trips · t_rt
//! ```
//!
//! * `B` is fitted per kernel (`update_cg`, `axpy`, …) and, for the kernels that multiply by
//!   A, per kernel and format ([`kernels::Curve`], [`kernels::curve_key`]) on GPU timestamps
//!   of real solves; `t_d` is the gap a solver loop leaves between launches and `t_rt` one
//!   submit-and-read round trip ([`Profile`], [`calibrate()`]).
//! * `x` of an SpMV comes from the layout the upload really builds ([`layout`]); the
//!   launches of an iteration and their vector bytes from [`kernels`].
//! * Round trips: `paper` check mode reads back every iteration (1 for the pipelined
//!   variants, 2 for classical CG, 4 for classical BiCGStab), `device` mode once per batch.
//!
//! * A scattered gather of x adds `γ_format · excess` bytes ([`gather`]): sectors of x a
//!   subgroup touches beyond one value per stored entry; γ is fitted by calibration on
//!   random-column matrices (1 when a profile has none). Fused CG's product gathers three
//!   vectors (r, Ap, p) where an SpMV gathers one ([`kernels::SpmvBytes`]): its excess
//!   counts three times, with its own γ and chain step τ per format (`format:3` in the
//!   profile; the format's own where a profile predates it).
//! * A launch with A lasts at least its longest per-thread loop: `τ_f · L`, L the layout's
//!   chain (longest row, ELL width, diagonals, BCSR steps), τ fitted per format jointly
//!   with the curves ([`chain`]; 0 when a profile has none).
//! * What the solver's untimed loop takes per launch beyond the sum of its kernels, per
//!   method and variant as a function of the rows n: `r_m(n)`, fitted on the calibration's
//!   own solves after the curves ([`loop_residual`]; 0 when a profile has none).
//!
//! Not modelled: preconditioners, GMRES, BiCG, Jacobi, where the gathered vector is cached
//! (L1, L2 or memory: γ is one number per format), clocks rising during a long solve.
//!
//! | file | what | needs a GPU |
//! |---|---|---|
//! | `sigmoid.rs` | Eq. 3 and its Levenberg–Marquardt fit | no |
//! | `layout.rs` | bytes of one SpMV per format, from the host conversions | no |
//! | `gather.rs` | sectors of x touched per subgroup, the fit of their weight γ | no |
//! | `chain.rs` | the longest per-thread loop's time per step τ and its fit | no |
//! | `kernels.rs` | launches, bytes and round trips of one iteration | no |
//! | `loop_residual.rs` | a solver loop's time per launch beyond its kernels, by size | no |
//! | `profile.rs` | the device profile file: identity, curves, rejection | no |
//! | `predict.rs` | predictions, ranking, the model's choice | no |
//! | `calibration_matrices.rs` | the matrices the calibration times | no |
//! | `calibrate.rs` | the measurements and fits of `krylov calibrate` | yes |

pub mod calibrate;
pub mod calibration_matrices;
pub mod chain;
pub mod gather;
pub mod kernels;
pub mod layout;
pub mod loop_residual;
pub mod predict;
pub mod profile;
pub mod sigmoid;

pub use calibrate::{CalibrateOptions, calibrate, device_identity};
pub use layout::{LayoutParams, MODEL_FORMATS, SpmvLayout, spmv_layout};
pub use predict::{ModelChoice, PredictRequest, Prediction, best, best_or_rule, predict};
pub use profile::{
    DeviceIdentity, PROFILE_DIR_ENV, Profile, ProfileError, default_profile_path, find_for_adapter,
    find_for_adapter_in, profile_dir,
};
pub use sigmoid::{Fit, Sample, Sigmoid, fit, fit_robust};
