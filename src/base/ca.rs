//! The vocabulary of CA-GMRES(s, m) (paper 002), shared by the CPU reference
//! ([`crate::cpu::cagmres`]) and the GPU solver (`solvers::cagmres`): the TSQR variants and
//! bases a solve is asked for, and what it reports (per cycle: the basis condition number,
//! the TSQR that ran and its fallbacks, the reductions and host syncs).

use super::error::{KrylovError, Result};

/// The TSQR variant (paper 002 Fig. 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tsqr {
    /// Modified Gram–Schmidt, one inner product at a time.
    Mgs,
    /// Classical Gram–Schmidt, one batch of projections per column.
    Cgs,
    /// Classical Gram–Schmidt with one re-orthogonalisation pass per column.
    Cgs2,
    /// Cholesky QR: R = chol(WᵀW), Q = W R⁻¹.
    CholQr,
    /// Cholesky QR twice (the second pass on the first pass's Q).
    CholQr2,
    /// Singular-value QR: G = U Λ Uᵀ (on the unit-diagonal scaled Gram matrix), R from the QR
    /// of Λ^½ Uᵀ, Q = W R⁻¹.
    Svqr,
    /// Communication-avoiding QR: a binary tree of Householder QRs over row blocks.
    Caqr,
}

impl Tsqr {
    /// Every variant, in the order of the paper's table.
    pub const ALL: [Tsqr; 7] = [
        Tsqr::Mgs,
        Tsqr::Cgs,
        Tsqr::Cgs2,
        Tsqr::CholQr,
        Tsqr::CholQr2,
        Tsqr::Svqr,
        Tsqr::Caqr,
    ];

    /// Global reductions of this variant on a block of `s` columns (see the module table).
    pub fn reductions(self, s: usize) -> usize {
        match self {
            Tsqr::Mgs => s * (s + 1) / 2,
            Tsqr::Cgs => (2 * s).saturating_sub(1),
            Tsqr::Cgs2 => (3 * s).saturating_sub(2),
            Tsqr::CholQr | Tsqr::Svqr | Tsqr::Caqr => 1,
            Tsqr::CholQr2 => 2,
        }
    }

    /// Host syncs of this variant on one block (see the module table).
    pub fn host_syncs(self) -> usize {
        match self {
            Tsqr::Mgs | Tsqr::Cgs | Tsqr::Cgs2 => 0,
            Tsqr::CholQr | Tsqr::Svqr | Tsqr::Caqr => 1,
            Tsqr::CholQr2 => 2,
        }
    }
}

/// What a TSQR did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct TsqrReport {
    pub requested: Tsqr,
    /// The variant that produced R (differs from `requested` after a fallback).
    pub used: Tsqr,
    /// Why the fallback happened (`None` when none did).
    pub fallback_reason: Option<String>,
    /// ‖I − QᵀQ‖_F (computed for the report; not counted as a reduction).
    pub orth_error: f64,
    /// Global reductions this TSQR made.
    pub reductions: usize,
    /// Host syncs this TSQR made.
    pub host_syncs: usize,
}

impl Tsqr {
    /// The name on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Tsqr::Mgs => "mgs",
            Tsqr::Cgs => "cgs",
            Tsqr::Cgs2 => "cgs2",
            Tsqr::CholQr => "cholqr",
            Tsqr::CholQr2 => "cholqr2",
            Tsqr::Svqr => "svqr",
            Tsqr::Caqr => "caqr",
        }
    }
}

impl std::fmt::Display for Tsqr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Tsqr {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Tsqr::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| {
                format!(
                    "unknown tsqr `{s}` (expected one of: {})",
                    Tsqr::ALL.map(|t| t.as_str()).join(", ")
                )
            })
    }
}

impl Basis {
    /// Both bases.
    pub const ALL: [Basis; 2] = [Basis::Monomial, Basis::Newton];

    /// The name on the command line and in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            Basis::Monomial => "monomial",
            Basis::Newton => "newton",
        }
    }
}

impl std::fmt::Display for Basis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for Basis {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        Basis::ALL
            .into_iter()
            .find(|t| t.as_str() == s)
            .ok_or_else(|| format!("unknown basis `{s}` (expected one of: monomial, newton)"))
    }
}

/// The Krylov basis the matrix powers build.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Basis {
    /// [v, Av, A²v, …]: cond grows like |λ₁/λ₂|^s.
    Monomial,
    /// [v, (A − θ₁)v, …] with Leja-ordered Ritz values as shifts.
    Newton,
}

/// The CA-GMRES parameters: s basis vectors per block, restart length m (a multiple of s).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct CaOptions {
    pub s: usize,
    pub m: usize,
    pub basis: Basis,
    pub tsqr: Tsqr,
}

impl Default for CaOptions {
    fn default() -> Self {
        CaOptions {
            s: 4,
            m: 20,
            basis: Basis::Newton,
            tsqr: Tsqr::CholQr2,
        }
    }
}

impl CaOptions {
    /// s ≥ 1, m ≥ 1, m a multiple of s; an `InvalidOption` error naming the rule otherwise.
    pub fn validate(&self) -> Result<()> {
        if self.s == 0 {
            return Err(KrylovError::InvalidOption(
                "CA-GMRES block size s must be at least 1".into(),
            ));
        }
        if self.m == 0 || !self.m.is_multiple_of(self.s) {
            return Err(KrylovError::InvalidOption(format!(
                "CA-GMRES restart length m = {} must be a positive multiple of s = {}",
                self.m, self.s
            )));
        }
        Ok(())
    }
}

impl CaOptions {
    /// These options for a system of `n` unknowns: a cycle holds m + 1 basis vectors of
    /// length n, so on a smaller system m shrinks to the longest multiple of some s' ≤ s with
    /// m + 1 ≤ n (the largest such s'), as GMRES's m shrinks to n. Returns the options and,
    /// when they changed, a note for the report; an error for n < 2.
    ///
    /// ```
    /// use krylov_wgpu::base::CaOptions;
    /// let ca = CaOptions { s: 5, m: 30, ..Default::default() };
    /// assert_eq!(ca.fitted_to(1000).unwrap().0.m, 30);
    /// // 29 = n − 1 is prime: s = 1 gives the longest cycle.
    /// let (fit, note) = ca.fitted_to(30).unwrap();
    /// assert_eq!((fit.s, fit.m), (1, 29));
    /// assert!(note.unwrap().contains("n = 30"));
    /// let fit = ca.fitted_to(29).unwrap().0;
    /// assert_eq!((fit.s, fit.m), (4, 28));
    /// assert_eq!(ca.fitted_to(4).unwrap().0.m, 3);
    /// assert!(ca.fitted_to(1).is_err());
    /// ```
    pub fn fitted_to(&self, n: usize) -> Result<(CaOptions, Option<String>)> {
        if self.m < n {
            return Ok((*self, None));
        }
        if n < 2 {
            return Err(KrylovError::InvalidOption(format!(
                "CA-GMRES needs at least 2 unknowns (n = {n}); use --method gmres"
            )));
        }
        // The longest cycle that fits (a restart of such a small system is what loses
        // convergence: pores_1, n = 30, stagnated as CA(5, 25) and converges in one cycle as
        // CA(4, 28)), then the largest block of that length.
        let (mut s, mut m) = (1, n - 1);
        for cand in (1..=self.s.min(n - 1)).rev() {
            let len = (n - 1) / cand * cand;
            if len > m || (len == m && cand > s) {
                (s, m) = (cand, len);
            }
        }
        let note = format!(
            "CA-GMRES(s = {}, m = {}) needs m + 1 ≤ n basis vectors; with n = {n} it ran as \
             CA-GMRES({s}, {m})",
            self.s, self.m
        );
        Ok((CaOptions { s, m, ..*self }, Some(note)))
    }
}

/// What one restart cycle did.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CycleInfo {
    /// `arnoldi` (the Newton basis's first, standard GMRES, cycle) or `ca`.
    pub kind: &'static str,
    /// Basis vectors generated (SpMVs) in the cycle.
    pub vectors: usize,
    /// Columns of H the cycle's least squares used.
    pub columns: usize,
    /// Blocks run (0 for an Arnoldi cycle).
    pub blocks: usize,
    /// Global reductions (‖r‖ of the restart included) and host syncs of the cycle.
    pub reductions: usize,
    pub syncs: usize,
    /// Largest cond₂ of a block's basis [q_j, W] = Q⁺R⁺ (σ_max/σ_min of R⁺; 1 for Arnoldi).
    pub basis_cond: f64,
    /// Largest |H entry below the subdiagonal| of the reconstruction, relative (rounding).
    pub below_subdiagonal: f64,
    /// The TSQR of each block.
    pub tsqr: Vec<TsqrReport>,
    /// The true residual ‖b − Ax‖ after the cycle's update.
    pub restart_residual: f64,
    /// Whether a block's R had a numerically zero diagonal entry past its first column (the
    /// basis lost rank: the cycle ended there and restarted).
    pub truncated: bool,
    /// Basis vectors computed: `vectors`, or more when the cycle's blocks were all recorded
    /// before the host read them (a deferred cycle, GPU with a Gram–Schmidt TSQR) and it
    /// ended early: the work done, what per-iteration costs divide by.
    pub recorded: usize,
}

/// CA-GMRES's own report, beside the common [`SolveReport`](crate::solvers::SolveReport).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CaReport {
    pub options: CaOptions,
    /// The Newton shifts in use (empty for the monomial basis, or before they are known).
    pub shifts: Vec<Shift>,
    /// The matrix powers scaling σ (see `powers`): ‖A‖_∞ for the monomial basis, the
    /// largest |Ritz value| for the Newton basis (‖A‖_∞ until the shifts are known).
    pub scale: f64,
    pub cycles: Vec<CycleInfo>,
    /// Global reductions and host syncs per CA cycle, averaged over the CA cycles that ran all
    /// m/s blocks (`None` when none did); `ca_counts_per_cycle` is the formula.
    pub reductions_per_cycle: Option<f64>,
    pub syncs_per_cycle: Option<f64>,
}

/// One shift θ = re + i·im. In a shift sequence a complex pair is two consecutive entries,
/// (a, +b) then (a, −b).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Shift {
    pub re: f64,
    pub im: f64,
}

impl Shift {
    /// A real shift.
    pub fn real(re: f64) -> Self {
        Shift { re, im: 0.0 }
    }

    /// ln |self − o| (the modified Leja order's product, summed as logarithms).
    pub fn dist_ln(self, o: Shift) -> f64 {
        ((self.re - o.re).powi(2) + (self.im - o.im).powi(2))
            .sqrt()
            .ln()
    }
}
