//! What a solve is asked to do, shared by the CPU reference and the GPU solvers.

use super::ca::{Basis, Tsqr};
use super::error::{KrylovError, Result};

macro_rules! cli_enum {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $var:ident = $s:literal),+ $(,)? }) => {
        $(#[$m])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
        pub enum $name { $($(#[$vm])* #[serde(rename = $s)] $var),+ }
        impl $name {
            /// All values, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$var),+];
            /// The name used on the command line and in reports.
            pub fn as_str(self) -> &'static str { match self { $($name::$var => $s),+ } }
        }
        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result { f.write_str(self.as_str()) }
        }
        impl std::str::FromStr for $name {
            type Err = String;
            fn from_str(s: &str) -> std::result::Result<Self, String> {
                match s { $($s => Ok($name::$var),)+ _ => Err(format!(
                    "unknown {} `{}` (expected one of: {})", stringify!($name).to_lowercase(), s,
                    [$($s),+].join(", "))) }
            }
        }
    };
}

cli_enum!(
    /// The Krylov (or stationary) method.
    Method {
        /// Conjugate gradients (SPD matrices).
        Cg = "cg",
        /// BiCGStab (general matrices).
        Bicgstab = "bicgstab",
        /// Restarted GMRES(m), the simpler GMRES of Walker–Zhou.
        Gmres = "gmres",
        /// Biconjugate gradients, using Aᵀ.
        Bicg = "bicg",
        /// Jacobi iteration x ← x + D⁻¹(b − Ax).
        Jacobi = "jacobi",
        /// Communication-avoiding GMRES(s, m) (paper 002): s basis vectors per global
        /// synchronisation from the matrix powers kernel, block orthogonalisation and TSQR.
        CaGmres = "cagmres",
    }
);

cli_enum!(
    /// Classical (textbook / BLAS-style) or pipelined (paper 000) formulation, or the
    /// pipelined one in fewer launches (`fused`: CG and GMRES).
    Variant {
        Classical = "classical",
        Pipelined = "pipelined",
        /// CG: the pipelined recurrences (paper 000, Alg. 2, eq. 3) with the update of x, r, p
        /// and the product A·p in one launch per iteration and one global reduction (the new
        /// direction is formed on the fly wherever the product reads it). GMRES: pipelined
        /// GMRES's step (Alg. 6) in two launches, the basis kept unnormalised.
        Fused = "fused",
        /// CG on a small system: the classical recurrence (Alg. 1) in one workgroup, whole
        /// iterations per launch with every inner product a workgroup sum and the direction
        /// held in workgroup memory; for systems of up to a few thousand rows (the adapter's
        /// workgroup memory sets the limit), where a launch costs more than the work.
        Workgroup = "workgroup",
        /// CG: fused CG's iteration, many per launch, by workgroups that are all resident at
        /// once and meet at a grid barrier between iterations (one barrier and one global
        /// reduction per iteration instead of one launch); the launch's workgroups are
        /// probed on the adapter, and a barrier that cannot hold falls back to fused.
        Cooperative = "cooperative",
        /// GMRES: p(1)-GMRES (Ghysels et al. 2013; paper 000 §3.3's shift-invariance
        /// remark): one launch and one global reduction per step. A second basis
        /// u_i = A v_{i−1} follows by a recurrence, so the product of a step reads a vector
        /// the previous launch finished; R_{i,i} comes from ‖u_i‖² − Σ_j R_{j,i}² and a cycle
        /// whose norm loses its accuracy restarts.
        P1 = "p1",
    }
);

cli_enum!(
    /// Preconditioner.
    Precond {
        None = "none",
        /// Diagonal scaling by D⁻¹.
        Jacobi = "jacobi",
        /// Incomplete LU on A's pattern, M = LU (general matrices; paper 004).
        Ilu0 = "ilu0",
        /// Incomplete Cholesky on A's pattern, M = LDLᵀ (symmetric matrices; CG).
        Ic0 = "ic0",
        /// Dual-threshold incomplete LU with fill-in (Saad's ILUT), M = LU (hard indefinite
        /// and badly scaled matrices where ILU(0) is unstable).
        Ilut = "ilut",
    }
);

cli_enum!(
    /// Which side M⁻¹ multiplies A on (GMRES, BiCGStab).
    Side {
        /// Solve M⁻¹A x = M⁻¹b: the method monitors the preconditioned residual ‖M⁻¹r‖
        /// against rtol·‖M⁻¹b‖ (SciPy's and PETSc's GMRES convention); the true residual
        /// still guards every convergence claim.
        Left = "left",
        /// Solve A M⁻¹ y = b, x = M⁻¹y: the method monitors the true residual ‖b − Ax‖
        /// itself (the default).
        Right = "right",
    }
);

/// How the GPU applies the triangular factors of ILU(0)/IC(0) (the CPU reference follows
/// the same choice so that iteration counts agree).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Trisolve {
    /// Level scheduling when the factors need at most [`Trisolve::AUTO_MAX_DISPATCHES`]
    /// dispatches per triangular solve (not counting the cuts of long serial runs,
    /// `cpu::trisolve::STAGE_STEP_BUDGET`), else [`Trisolve::AUTO_SWEEPS`] Jacobi sweeps.
    #[default]
    Auto,
    /// Exact solves by level scheduling: rows of one level are independent; a dispatch per
    /// wide level, a single-workgroup dispatch for each run of narrow ones.
    Levels,
    /// K Jacobi sweeps x ← D⁻¹(rhs − (T − D)x) from x = D⁻¹rhs: one dispatch each, no
    /// dependence on the level count, exact once K reaches it (an approximate M⁻¹ before).
    Sweeps(u32),
}

impl Trisolve {
    /// `auto` takes levels when a triangular solve needs at most this many dispatches.
    pub const AUTO_MAX_DISPATCHES: usize = 48;
    /// The sweeps `auto` takes otherwise.
    pub const AUTO_SWEEPS: u32 = 6;
}

impl std::fmt::Display for Trisolve {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Trisolve::Auto => f.write_str("auto"),
            Trisolve::Levels => f.write_str("levels"),
            Trisolve::Sweeps(k) => write!(f, "sweeps:{k}"),
        }
    }
}

impl std::str::FromStr for Trisolve {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad =
            || format!("unknown trisolve `{s}` (expected auto, levels or sweeps:K with K >= 1)");
        match s {
            "auto" => Ok(Trisolve::Auto),
            "levels" => Ok(Trisolve::Levels),
            _ => match s.strip_prefix("sweeps:").map(str::parse::<u32>) {
                Some(Ok(k)) if (1..=1000).contains(&k) => Ok(Trisolve::Sweeps(k)),
                _ => Err(bad()),
            },
        }
    }
}

impl serde::Serialize for Trisolve {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

cli_enum!(
    /// Row reordering of the system before a solve (`matrix::reorder`): P·A x = P·b has the
    /// same solution and the same residual norms, and a diagonal fit for Jacobi and ILU(0).
    Reorder {
        /// A maximum-product matching when the method is not CG, M is Jacobi or ILU(0) (or
        /// the method is the Jacobi iteration) and A's diagonal has a zero entry
        /// (`matrix::reorder::auto_reason`); otherwise none.
        Auto = "auto",
        /// Never reorder.
        None = "none",
        /// Always permute by a maximum-product matching (MC64 job 5); an error when A is
        /// structurally singular.
        Matching = "matching",
        /// Renumber the unknowns by reverse Cuthill–McKee (a symmetric permutation P·A·Pᵀ:
        /// smaller bandwidth, often a better ILU, but more ILU levels); x is permuted back
        /// on output.
        Rcm = "rcm",
    }
);

cli_enum!(
    /// Orthogonalisation used by classical GMRES.
    GramSchmidt {
        /// Modified Gram–Schmidt: one inner product at a time.
        Mgs = "mgs",
        /// Classical Gram–Schmidt: all inner products at once.
        Cgs = "cgs",
        /// Classical Gram–Schmidt with one re-orthogonalisation.
        Cgs2 = "cgs2",
    }
);

cli_enum!(
    /// Sparse storage format of the GPU SpMV.
    Format {
        /// Compressed sparse row, one thread per row.
        Csr = "csr",
        /// ELLPACK, column-major, every row padded to the longest.
        Ell = "ell",
        /// Diagonal storage (banded matrices; paper 001).
        Dia = "dia",
        /// BCSR with 1×1 blocks in the MBR mapping (paper 003).
        Bcsr1 = "bcsr1",
        /// BCSR with 2×2 blocks.
        Bcsr2 = "bcsr2",
        /// BCSR with 4×4 blocks.
        Bcsr4 = "bcsr4",
        /// BCSR with 8×8 blocks.
        Bcsr8 = "bcsr8",
        /// SELL-C-σ (C from the adapter's subgroup size).
        Sell = "sell",
        /// Chosen from the matrix's statistics (report: `format`, `format_reason`).
        Auto = "auto",
    }
);

cli_enum!(
    /// How a GPU solve checks convergence.
    CheckMode {
        /// As paper 000 proposes: the partial sums of the inner products are read back every
        /// iteration and finished on the host (at most one transfer per iteration).
        Paper = "paper",
        /// The scalars are finished on the GPU and never leave it inside the loop; the host
        /// records k iterations per submit and reads the residual history once per batch.
        Device = "device",
    }
);

cli_enum!(
    /// How the GPU kernels sum their inner products and norms (issue 15).
    Reduction {
        /// Plain sums: per-thread loops, a workgroup tree, a second stage over workgroups.
        Plain = "plain",
        /// The same stages with TwoSum error terms (`shaders/lib/sum_compensated.wgsl`):
        /// within about one rounding of the exact sum of the rounded terms. f32 kernels only;
        /// f64 solves and the CPU reference run plain.
        Compensated = "compensated",
    }
);

cli_enum!(
    /// The precision of the outer loop of mixed-precision refinement (residual and x).
    OuterPrecision {
        /// f64 where the device has SHADER_F64 (and on the CPU), else double-single.
        Auto = "auto",
        /// f64 (a GPU needs SHADER_F64).
        F64 = "f64",
        /// Double-single: pairs of f32 with error-free transformations (any GPU).
        DoubleSingle = "double-single",
    }
);

cli_enum!(
    /// How mixed precision keeps f32 iterations on course to an f64 answer.
    Refinement {
        /// Pipelined CG (no preconditioner or Jacobi) runs as one f32 Krylov iteration whose
        /// x is folded into the high-precision x, and whose residual is replaced by b − Ax
        /// computed in high precision, every time the residual has fallen by
        /// `solvers::mixed::reliable::FOLD_FACTOR` (reliable updates, the search direction
        /// kept; `inner_rtol` does not apply); every other solve restarts.
        Auto = "auto",
        /// Iterative refinement: each outer step solves A d = r in f32 from scratch.
        Restart = "restart",
    }
);

/// Options of mixed-precision iterative refinement (`--precision mixed`, see
/// `solvers::mixed`): the outer loop refines x in high precision, each inner solve runs in f32
/// with the method, preconditioner and variant of the [`SolveOptions`].
///
/// ```
/// use krylov_wgpu::base::RefineOptions;
/// let refine = RefineOptions::default();
/// assert_eq!(refine.inner_rtol, 1e-4);
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RefineOptions {
    /// Relative tolerance of each inner f32 solve on its normalised right-hand side: each
    /// outer iteration aims to shrink the residual by this factor (the last one is loosened
    /// to what is still needed). Between f32's ε·κ and 1.
    pub inner_rtol: f64,
    /// Most outer iterations (inner solves).
    pub max_outer: usize,
    /// The outer precision.
    pub outer: OuterPrecision,
    /// Reliable updates where they apply, or restarted refinement.
    pub refinement: Refinement,
}

impl Default for RefineOptions {
    fn default() -> Self {
        RefineOptions {
            inner_rtol: 1e-4,
            max_outer: 30,
            outer: OuterPrecision::Auto,
            refinement: Refinement::Auto,
        }
    }
}

impl RefineOptions {
    /// Checks the values.
    pub fn validate(&self) -> Result<()> {
        if !(self.inner_rtol > 0.0 && self.inner_rtol < 1.0) {
            return Err(KrylovError::InvalidOption(format!(
                "the inner rtol of mixed refinement must lie in (0, 1), got {}",
                self.inner_rtol
            )));
        }
        if self.max_outer == 0 {
            return Err(KrylovError::InvalidOption(
                "mixed refinement needs at least one outer iteration".into(),
            ));
        }
        Ok(())
    }
}

impl Variant {
    /// The variants `method` has: fused and workgroup are CG's and GMRES's, cooperative CG's,
    /// p1 GMRES's.
    ///
    /// ```
    /// use krylov_wgpu::solvers::{Method, Variant};
    /// assert_eq!(Variant::of(Method::Cg).len(), 5);
    /// assert!(Variant::of(Method::Gmres).contains(&Variant::Fused));
    /// assert!(Variant::of(Method::Gmres).contains(&Variant::P1));
    /// assert!(!Variant::of(Method::Cg).contains(&Variant::P1));
    /// assert!(Variant::of(Method::Gmres).contains(&Variant::Workgroup));
    /// assert!(!Variant::of(Method::Gmres).contains(&Variant::Cooperative));
    /// assert!(!Variant::of(Method::Bicgstab).contains(&Variant::Fused));
    /// ```
    pub fn of(method: Method) -> &'static [Variant] {
        match method {
            Method::Cg => &[
                Variant::Classical,
                Variant::Pipelined,
                Variant::Fused,
                Variant::Workgroup,
                Variant::Cooperative,
            ],
            Method::Gmres => &[
                Variant::Classical,
                Variant::Pipelined,
                Variant::Fused,
                Variant::P1,
                Variant::Workgroup,
            ],
            _ => &[Variant::Classical, Variant::Pipelined],
        }
    }
}

/// The error for `--variant fused` with a method other than CG and GMRES.
pub fn fused_refused(method: Method) -> KrylovError {
    variant_refused(method, Variant::Fused)
}

/// The error for a variant `method` does not have ([`Variant::of`]).
///
/// ```
/// use krylov_wgpu::base::options::variant_refused;
/// use krylov_wgpu::solvers::{Method, Variant};
/// let e = variant_refused(Method::Gmres, Variant::Cooperative).to_string();
/// assert!(e.contains("CG's") && e.contains("classical, pipelined, fused"), "{e}");
/// ```
pub fn variant_refused(method: Method, variant: Variant) -> KrylovError {
    let what = match variant {
        Variant::Fused => {
            "the fused variant (pipelined recurrences in fewer launches) is CG's and GMRES's"
        }
        Variant::Workgroup => {
            "the workgroup variant (whole iterations in one workgroup, for small systems) is \
             CG's and GMRES's"
        }
        Variant::Cooperative => {
            "the cooperative variant (fused CG iterations across a grid barrier) is CG's"
        }
        Variant::P1 => "the p1 variant (p(1)-GMRES, one launch per step) is GMRES's",
        _ => "every method has the classical and pipelined variants",
    };
    let has: Vec<String> = Variant::of(method).iter().map(|v| v.to_string()).collect();
    KrylovError::InvalidOption(format!("{what}; {method} has {}", has.join(", ")))
}

/// Default padding budget: a format may store at most this many entries (values, padding
/// included) per CSR non-zero. ELL with one long row, DIA on a scattered matrix or BCSR8 on a
/// matrix without dense blocks exceed it and are refused.
pub const DEFAULT_PADDING_BUDGET: f64 = 10.0;

/// Options of a solve. The stopping test is `‖r_k‖₂ ≤ max(rtol·‖b‖₂, atol)` on the
/// residual the method tracks; the reported `relative_residual` is always recomputed from x.
///
/// ```
/// use krylov_wgpu::solvers::{Method, SolveOptions, Variant};
/// let opts = SolveOptions { method: Method::Cg, variant: Variant::Pipelined, ..Default::default() };
/// assert_eq!(opts.rtol, 1e-6);
/// ```
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct SolveOptions {
    pub method: Method,
    pub variant: Variant,
    /// Relative tolerance on ‖r‖₂/‖b‖₂.
    pub rtol: f64,
    /// Absolute tolerance on ‖r‖₂.
    pub atol: f64,
    /// Iteration limit (for GMRES: total inner iterations over all restarts).
    pub max_iter: usize,
    /// GMRES restart length m (CA-GMRES: a multiple of `s_step`).
    pub restart: usize,
    /// CA-GMRES: basis vectors per block s (one matrix powers call and one block
    /// orthogonalisation per s vectors).
    pub s_step: usize,
    /// CA-GMRES: the tall-skinny QR of each block.
    pub tsqr: Tsqr,
    /// CA-GMRES: the basis the matrix powers build.
    pub basis: Basis,
    pub precond: Precond,
    /// Side of the preconditioner for GMRES and BiCGStab (CG and BiCG are split/symmetric).
    pub side: Side,
    /// Triangular-solve strategy of ILU(0)/IC(0).
    pub trisolve: Trisolve,
    /// Row reordering before the solve (`auto`: a maximum-product matching where a zero
    /// diagonal defeats Jacobi or ILU(0); see [`Reorder`]).
    pub reorder: Reorder,
    /// Orthogonalisation for classical GMRES (pipelined GMRES always uses CGS, or CGS2).
    pub gs: GramSchmidt,
    /// Convergence checking of GPU solves (ignored on the CPU).
    pub check_mode: CheckMode,
    /// Iterations recorded per submit in `device` mode; 0 adapts it to the convergence rate.
    pub batch: usize,
    /// Storage format of the GPU SpMV (ignored on the CPU).
    pub format: Format,
    /// Largest stored entries (padding included) per non-zero a format may use; formats
    /// over it are refused (`auto` skips them).
    pub max_padding: f64,
    /// Plain or compensated sums in the f32 GPU kernels' reductions.
    pub reduction: Reduction,
    /// Balance rows and columns before the solve (`matrix::equilibrate`): the method runs on
    /// D_r·A·D_c, x is unscaled and its true residual rechecked.
    pub equilibrate: bool,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            method: Method::Cg,
            variant: Variant::Pipelined,
            rtol: 1e-6,
            atol: 0.0,
            max_iter: 10_000,
            restart: 30,
            s_step: 5,
            tsqr: Tsqr::CholQr2,
            basis: Basis::Newton,
            precond: Precond::None,
            side: Side::Right,
            trisolve: Trisolve::Auto,
            reorder: Reorder::Auto,
            gs: GramSchmidt::Cgs,
            check_mode: CheckMode::Device,
            batch: 0,
            format: Format::Csr,
            max_padding: DEFAULT_PADDING_BUDGET,
            reduction: Reduction::Plain,
            equilibrate: false,
        }
    }
}

impl SolveOptions {
    /// Checks option values themselves (not the system).
    pub fn validate(&self) -> Result<()> {
        if !(self.max_padding >= 1.0 && self.max_padding.is_finite()) {
            return Err(KrylovError::InvalidOption(format!(
                "max_padding must be finite and >= 1, got {}",
                self.max_padding
            )));
        }
        if !(self.rtol >= 0.0 && self.rtol.is_finite()) {
            return Err(KrylovError::InvalidOption(format!(
                "rtol must be finite and >= 0, got {}",
                self.rtol
            )));
        }
        if !(self.atol >= 0.0 && self.atol.is_finite()) {
            return Err(KrylovError::InvalidOption(format!(
                "atol must be finite and >= 0, got {}",
                self.atol
            )));
        }
        if self.rtol == 0.0 && self.atol == 0.0 && self.max_iter == usize::MAX {
            return Err(KrylovError::InvalidOption(
                "rtol = atol = 0 needs a finite max_iter".into(),
            ));
        }
        if matches!(self.method, Method::Gmres | Method::CaGmres) && self.restart == 0 {
            return Err(KrylovError::InvalidOption("restart must be >= 1".into()));
        }
        if self.method == Method::CaGmres {
            self.ca().validate()?;
        }
        if !Variant::of(self.method).contains(&self.variant) {
            return Err(variant_refused(self.method, self.variant));
        }
        Ok(())
    }

    /// The CA-GMRES parameters of these options: s = `s_step`, m = `restart`.
    pub fn ca(&self) -> super::ca::CaOptions {
        super::ca::CaOptions {
            s: self.s_step,
            m: self.restart,
            basis: self.basis,
            tsqr: self.tsqr,
        }
    }

    /// The absolute residual norm at which the solve stops, given ‖b‖₂.
    pub fn threshold(&self, b_norm: f64) -> f64 {
        (self.rtol * b_norm).max(self.atol)
    }
}
