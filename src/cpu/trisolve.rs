//! Sparse triangular solves x = T⁻¹ rhs, the apply half of ILU(0)/IC(0): the factor layout
//! the GPU kernels read ([`TriFactor`]), its level schedule ([`Levels`], [`Stage`]) and the
//! CPU twins of the two GPU strategies — the exact solve (what the level-scheduled kernel
//! `trisolve_levels` computes, row by row in dependency order) and K Jacobi sweeps (what
//! `trisolve_sweep` computes, one sweep per launch).
//!
//! ```
//! use krylov_wgpu::cpu::trisolve::TriFactor;
//! // T = [[2, 0], [1, 4]]: lower, x = T⁻¹ [2, 9] = [1, 2].
//! let t = TriFactor::<f64>::from_rows(2, true, |i| match i {
//!     0 => (vec![], 2.0),
//!     _ => (vec![(0, 1.0)], 4.0),
//! });
//! let mut x = vec![0.0; 2];
//! t.solve(&[2.0, 9.0], &mut x);
//! assert_eq!(x, vec![1.0, 2.0]);
//! assert_eq!(t.levels().count(), 2);
//! # let mut y = vec![0.0; 2];
//! # t.sweeps(&[2.0, 9.0], &mut y, 2);
//! # assert_eq!(y, x);
//! ```
//!
//! Two factors of one orientation **stack** into the block-diagonal diag(T₁, T₂)
//! ([`TriFactor::stack`]): one solve of it on [rhs₁; rhs₂] is the two solves side by side, its
//! level ℓ the union of both factors' levels ℓ, so a level-scheduled or swept solve of both
//! costs the dispatches of one (BiCG's concurrent M⁻¹r and M⁻ᵀr̃, paper 004 §3).

use crate::base::options::Trisolve;
use crate::base::scalar::Scalar;

/// Rows per level above which a level gets a dispatch of its own (many workgroups); runs of
/// narrower levels are swept by one workgroup in one dispatch, with a barrier per level.
/// (A launch costs about as much as ~16 barrier-separated passes of one workgroup, and one
/// workgroup covers 512 rows in two passes.) Measured on an H100: with 4096, the 190 levels
/// of a 64³ grid (up to ~3000 rows each) all merged into one single-workgroup stage that
/// took 7–12 ms per iteration; with 512 the wide ones get the whole GPU, and `auto` (more
/// than 48 dispatches) picks sweeps there.
pub const WIDE_LEVEL_ROWS: usize = 512;

/// The most loop steps a single-workgroup stage may ask of one invocation ([`Levels::steps`]
/// summed over the stage's levels); a longer run of narrow levels is cut into several stages.
/// Mesa's llvmpipe (lavapipe, the CI's and the software adapter) ends every loop of an
/// invocation once it has taken 65535 loop steps in all (gallivm's loop limiter), silently:
/// the ILUT factors of `cavity2d:24:1000` (843 levels, ~230 entries a row, one stage) left
/// three rows in four unsolved there, so GMRES stagnated where the CPU twin converged in 37
/// iterations; a band of 40 entries a row stopped at its 1474th row, the 65535th step
/// (tests/gpu_ilu/apply.rs). Hardware GPUs have no such limit; for them the cut costs one
/// launch (~3 µs) per 60000 steps of one workgroup's serial work, which take far longer.
pub const STAGE_STEP_BUDGET: u64 = 60_000;

/// A sparse triangular matrix T (lower or upper, diagonal non-zero) stored the way the GPU
/// kernels read it: row i holds its strictly triangular entries at `ptr[i] .. ptr[i+1] − 1`
/// and 1/tᵢᵢ at `ptr[i+1] − 1` (column i), so one row solves as
/// xᵢ = (rhsᵢ − Σⱼ tᵢⱼ xⱼ) · (1/tᵢᵢ).
#[derive(Debug, Clone)]
pub struct TriFactor<T> {
    n: usize,
    lower: bool,
    pub(crate) ptr: Vec<u32>,
    pub(crate) col: Vec<u32>,
    pub(crate) val: Vec<T>,
    /// First rows of the diagonal blocks, then n: `[0, n]` for a factor, one more entry per
    /// factor stacked ([`TriFactor::stack`]).
    blocks: Vec<u32>,
}

impl<T: Scalar> TriFactor<T> {
    /// Builds T from `row(i) = (strict entries (j, tᵢⱼ), tᵢᵢ)`; `lower` says which side the
    /// strict entries are on (debug-checked).
    pub fn from_rows(
        n: usize,
        lower: bool,
        row: impl Fn(usize) -> (Vec<(usize, f64)>, f64),
    ) -> Self {
        let (mut ptr, mut col, mut val) = (vec![0u32], Vec::new(), Vec::new());
        for i in 0..n {
            let (strict, diag) = row(i);
            for (j, v) in strict {
                debug_assert!(if lower { j < i } else { j > i });
                col.push(j as u32);
                val.push(T::from_f64(v));
            }
            col.push(i as u32);
            val.push(T::from_f64(1.0 / diag));
            ptr.push(col.len() as u32);
        }
        TriFactor {
            n,
            lower,
            ptr,
            col,
            val,
            blocks: vec![0, n as u32],
        }
    }

    /// The block-diagonal factor diag(`a`, `b`) (both lower or both upper): rows of `b`
    /// follow those of `a`, their columns shifted by `a.n()`. Solving it on [rhs_a; rhs_b]
    /// gives [a⁻¹rhs_a; b⁻¹rhs_b] with the same operations as the two separate solves (by
    /// either strategy); its level ℓ holds the rows of level ℓ of both, so its level count
    /// is the larger of theirs. Stacks of stacks keep every block.
    ///
    /// ```
    /// use krylov_wgpu::cpu::trisolve::TriFactor;
    /// let a = TriFactor::<f64>::from_rows(2, true, |i| (if i == 1 { vec![(0, 1.0)] } else { vec![] }, 2.0));
    /// let b = TriFactor::<f64>::from_rows(1, true, |_| (vec![], 4.0));
    /// let s = TriFactor::stack(&a, &b);
    /// let mut x = vec![0.0; 3];
    /// s.solve(&[2.0, 5.0, 8.0], &mut x);
    /// assert_eq!(x, vec![1.0, 2.0, 2.0]);
    /// assert_eq!((s.n(), s.levels().count()), (3, 2));
    /// ```
    ///
    /// Panics when one factor is lower and the other upper.
    pub fn stack(a: &TriFactor<T>, b: &TriFactor<T>) -> TriFactor<T> {
        assert_eq!(
            a.lower, b.lower,
            "stacked factors must both be lower or both upper"
        );
        let (na, nnz_a) = (a.n as u32, a.val.len() as u32);
        let mut ptr = a.ptr.clone();
        ptr.extend(b.ptr[1..].iter().map(|&p| p + nnz_a));
        let mut col = a.col.clone();
        col.extend(b.col.iter().map(|&c| c + na));
        let mut val = a.val.clone();
        val.extend_from_slice(&b.val);
        let mut blocks = a.blocks.clone();
        blocks.extend(b.blocks[1..].iter().map(|&r| r + na));
        TriFactor {
            n: a.n + b.n,
            lower: a.lower,
            ptr,
            col,
            val,
            blocks,
        }
    }

    /// Diagonal blocks: 1 for a factor, 2 for diag(T₁, T₂).
    pub fn blocks(&self) -> usize {
        self.blocks.len() - 1
    }

    /// Order of T.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Whether T is lower triangular.
    pub fn is_lower(&self) -> bool {
        self.lower
    }

    /// Stored entries (strict part plus one inverse diagonal per row).
    pub fn stored(&self) -> usize {
        self.val.len()
    }

    fn strict(&self, i: usize) -> std::ops::Range<usize> {
        self.ptr[i] as usize..self.ptr[i + 1] as usize - 1
    }

    fn inv_diag(&self, i: usize) -> T {
        self.val[self.ptr[i + 1] as usize - 1]
    }

    /// xᵢ = (rhsᵢ − Σⱼ tᵢⱼ xⱼ)/tᵢᵢ with the xⱼ of `x`: one row, as both kernels compute it.
    fn row_solve(&self, i: usize, rhs: T, x: &[T]) -> T {
        let mut s = rhs;
        for p in self.strict(i) {
            s -= self.val[p] * x[self.col[p] as usize];
        }
        s * self.inv_diag(i)
    }

    /// x = T⁻¹ rhs exactly (forward or back substitution, in `T`): the twin of the
    /// level-scheduled kernel, which solves the same rows with the same operations.
    pub fn solve(&self, rhs: &[T], x: &mut [T]) {
        if self.lower {
            for i in 0..self.n {
                x[i] = self.row_solve(i, rhs[i], x);
            }
        } else {
            for i in (0..self.n).rev() {
                x[i] = self.row_solve(i, rhs[i], x);
            }
        }
    }

    /// x ≈ T⁻¹ rhs by `k` Jacobi sweeps x⁽¹⁾ = D⁻¹rhs, x⁽ˢ⁺¹⁾ = D⁻¹(rhs − (T − D)x⁽ˢ⁾): the
    /// twin of `k` launches of `trisolve_sweep`. Exact once `k` ≥ the level count (T − D is
    /// nilpotent on the levels).
    pub fn sweeps(&self, rhs: &[T], x: &mut [T], k: u32) {
        let zero = vec![T::zero(); self.n];
        let mut prev = zero.clone();
        for s in 0..k.max(1) {
            let from: &[T] = if s == 0 { &zero } else { &prev };
            for (i, xi) in x.iter_mut().enumerate() {
                *xi = self.row_solve(i, rhs[i], from);
            }
            prev.copy_from_slice(x);
        }
    }

    /// x ≈ T⁻¹ rhs by the strategy `how` (`Auto` must have been resolved: it solves exactly).
    pub fn apply(&self, how: Trisolve, rhs: &[T], x: &mut [T]) {
        match how {
            Trisolve::Sweeps(k) => self.sweeps(rhs, x, k),
            Trisolve::Levels | Trisolve::Auto => self.solve(rhs, x),
        }
    }

    /// The level sets: level(i) = 1 + max level(j) over the tᵢⱼ ≠ 0 (j solved before i), so
    /// the rows of one level are independent of each other.
    pub fn levels(&self) -> Levels {
        let mut level = vec![0u32; self.n];
        let order: Box<dyn Iterator<Item = usize>> = if self.lower {
            Box::new(0..self.n)
        } else {
            Box::new((0..self.n).rev())
        };
        let mut count = 0u32;
        for i in order {
            let l = self
                .strict(i)
                .map(|p| level[self.col[p] as usize] + 1)
                .max()
                .unwrap_or(0);
            level[i] = l;
            count = count.max(l + 1);
        }
        let mut ptr = vec![0u32; count as usize + 1];
        for &l in &level {
            ptr[l as usize + 1] += 1;
        }
        for l in 0..count as usize {
            ptr[l + 1] += ptr[l];
        }
        let mut next = ptr.clone();
        let mut rows = vec![0u32; self.n];
        // Rows of a level in increasing (lower) or decreasing (upper) order: the order the
        // substitution visits them, so neighbouring threads read neighbouring rows.
        let visit: Box<dyn Iterator<Item = usize>> = if self.lower {
            Box::new(0..self.n)
        } else {
            Box::new((0..self.n).rev())
        };
        // A level's steps as one invocation could take them (every row its own, as if one
        // thread solved them all): the level loop's step and exit, and per row the row loop's
        // step, the row's terms and the exit.
        let mut steps = vec![2u64; count as usize];
        for i in visit {
            let l = level[i] as usize;
            rows[next[l] as usize] = i as u32;
            next[l] += 1;
            steps[l] += 3 + self.strict(i).len() as u64;
        }
        Levels { ptr, rows, steps }
    }

    /// The dispatches of one level-scheduled solve of this factor with its `levels`: as
    /// [`Levels::stages`], a level standing alone when it is wide, but for a stacked factor
    /// "wide" means wider than [`WIDE_LEVEL_ROWS`] in one of its blocks. The stacked solve
    /// then merges the blocks' schedules level by level — a wide level of either factor is a
    /// wide stage of the stack, a run of levels narrow in both one single-workgroup stage —
    /// and never needs more dispatches than the two solves (each stage boundary is one of
    /// theirs), usually as many as the longer one. For one block it is `levels.stages()`.
    pub fn stages(&self, levels: &Levels) -> Vec<Stage> {
        if self.blocks() == 1 {
            return levels.stages();
        }
        let widest_block = |l: usize| {
            let mut count = vec![0usize; self.blocks()];
            for &r in &levels.rows[levels.ptr[l] as usize..levels.ptr[l + 1] as usize] {
                count[self.blocks.partition_point(|&b| b <= r) - 1] += 1;
            }
            count.into_iter().max().unwrap_or(0)
        };
        levels.stages_by(|l| widest_block(l) > WIDE_LEVEL_ROWS, STAGE_STEP_BUDGET)
    }
}

/// The level sets of a triangular factor: the rows of level l are
/// `rows[ptr[l] .. ptr[l+1]]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Levels {
    pub ptr: Vec<u32>,
    pub rows: Vec<u32>,
    /// Per level, the loop steps one invocation of a single-workgroup stage takes at most
    /// for it (bounded by [`STAGE_STEP_BUDGET`] per stage).
    pub steps: Vec<u64>,
}

impl Levels {
    /// Number of levels.
    pub fn count(&self) -> usize {
        self.ptr.len() - 1
    }

    /// Rows in level `l`.
    pub fn size(&self, l: usize) -> usize {
        (self.ptr[l + 1] - self.ptr[l]) as usize
    }

    /// The dispatches of one level-scheduled solve: each level wider than
    /// [`WIDE_LEVEL_ROWS`] alone, each run of narrower ones merged into single-workgroup
    /// stages of at most [`STAGE_STEP_BUDGET`] steps.
    pub fn stages(&self) -> Vec<Stage> {
        self.stages_by(|l| self.size(l) > WIDE_LEVEL_ROWS, STAGE_STEP_BUDGET)
    }

    /// The stages' count without the cuts of [`STAGE_STEP_BUDGET`]: the wide levels and the
    /// runs of narrow ones, what `Trisolve::Auto` weighs ([`resolve`]). A cut adds a launch
    /// only beside 60000 steps of one workgroup's serial work, far longer than the launch.
    pub fn runs(&self) -> usize {
        self.stages_by(|l| self.size(l) > WIDE_LEVEL_ROWS, u64::MAX)
            .len()
    }

    /// The stages when level l is wide iff `wide(l)`: each wide level alone, each run of
    /// narrow ones merged into stages of at most [`STAGE_STEP_BUDGET`] steps (a level of
    /// more steps stands alone).
    fn stages_by(&self, wide: impl Fn(usize) -> bool, budget: u64) -> Vec<Stage> {
        let mut stages = Vec::new();
        let mut l = 0;
        while l < self.count() {
            if wide(l) {
                stages.push(Stage {
                    levels: l..l + 1,
                    wide: true,
                });
                l += 1;
            } else {
                let start = l;
                let mut steps = 0;
                while l < self.count()
                    && !wide(l)
                    && (l == start || steps + self.steps[l] <= budget)
                {
                    steps += self.steps[l];
                    l += 1;
                }
                stages.push(Stage {
                    levels: start..l,
                    wide: false,
                });
            }
        }
        stages
    }
}

/// One dispatch of a level-scheduled solve: a wide level (many workgroups) or a run of
/// narrow levels swept by one workgroup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stage {
    pub levels: std::ops::Range<usize>,
    pub wide: bool,
}

/// The strategy `how` resolves to for factors with these level schedules: `Auto` takes
/// levels when no solve needs more than [`Trisolve::AUTO_MAX_DISPATCHES`] dispatches ([`Levels::runs`]), else
/// [`Trisolve::AUTO_SWEEPS`] sweeps. Explicit choices are kept.
pub fn resolve(how: Trisolve, schedules: &[&Levels]) -> Trisolve {
    match how {
        Trisolve::Auto => {
            let most = schedules.iter().map(|l| l.runs()).max().unwrap_or(0);
            if most <= Trisolve::AUTO_MAX_DISPATCHES {
                Trisolve::Levels
            } else {
                Trisolve::Sweeps(Trisolve::AUTO_SWEEPS)
            }
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A random lower (or upper) factor with a dominant diagonal.
    fn random(n: usize, lower: bool, seed: u64) -> TriFactor<f64> {
        let mut s = seed;
        let mut next = move || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as f64 / (1u64 << 31) as f64
        };
        let rows: Vec<(Vec<(usize, f64)>, f64)> = (0..n)
            .map(|i| {
                let mut strict = Vec::new();
                for _ in 0..3 {
                    let span = if lower { i } else { n - 1 - i };
                    if span > 0 {
                        let d = 1 + (next() * span as f64) as usize % span;
                        let j = if lower { i - d } else { i + d };
                        if !strict.iter().any(|&(c, _)| c == j) {
                            strict.push((j, next() - 0.5));
                        }
                    }
                }
                strict.sort_by_key(|e| e.0);
                (strict, 2.0 + next())
            })
            .collect();
        TriFactor::from_rows(n, lower, |i| rows[i].clone())
    }

    fn dense_solve(t: &TriFactor<f64>, rhs: &[f64]) -> Vec<f64> {
        // Independent oracle: build the dense matrix and substitute.
        let n = t.n();
        let mut m = vec![vec![0.0; n]; n];
        for (i, row) in m.iter_mut().enumerate() {
            for p in t.strict(i) {
                row[t.col[p] as usize] = t.val[p];
            }
            row[i] = 1.0 / t.inv_diag(i);
        }
        let mut x = vec![0.0; n];
        let order: Vec<usize> = if t.is_lower() {
            (0..n).collect()
        } else {
            (0..n).rev().collect()
        };
        for i in order {
            let s: f64 = (0..n).filter(|&j| j != i).map(|j| m[i][j] * x[j]).sum();
            x[i] = (rhs[i] - s) / m[i][i];
        }
        x
    }

    #[test]
    fn exact_and_enough_sweeps_match_a_dense_substitution() {
        for (lower, seed) in [(true, 1), (false, 2), (true, 3)] {
            let t = random(60, lower, seed);
            let rhs: Vec<f64> = (0..60).map(|i| (i as f64 * 0.7).cos()).collect();
            let want = dense_solve(&t, &rhs);
            let mut x = vec![f64::NAN; 60];
            t.solve(&rhs, &mut x);
            for (a, b) in x.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
            }
            let levels = t.levels().count() as u32;
            let mut y = vec![f64::NAN; 60];
            t.sweeps(&rhs, &mut y, levels);
            for (a, b) in y.iter().zip(&want) {
                assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0), "{a} vs {b}");
            }
            // Fewer sweeps than levels is an approximation, not the solve.
            if levels > 2 {
                t.sweeps(&rhs, &mut y, 1);
                assert!(y.iter().zip(&want).any(|(a, b)| (a - b).abs() > 1e-6));
            }
        }
    }

    #[test]
    fn levels_respect_every_dependency_and_cover_each_row_once() {
        let t = random(200, false, 7);
        let lv = t.levels();
        let mut level_of = vec![usize::MAX; 200];
        for l in 0..lv.count() {
            for &r in &lv.rows[lv.ptr[l] as usize..lv.ptr[l + 1] as usize] {
                assert_eq!(level_of[r as usize], usize::MAX, "row {r} twice");
                level_of[r as usize] = l;
            }
        }
        for i in 0..200 {
            for p in t.strict(i) {
                assert!(level_of[t.col[p] as usize] < level_of[i]);
            }
        }
    }

    #[test]
    fn narrow_levels_merge_and_wide_ones_stand_alone() {
        // Diagonal (one level of n rows) vs a chain (n levels of one row).
        let n = WIDE_LEVEL_ROWS + 10;
        let diag = TriFactor::<f64>::from_rows(n, true, |_| (vec![], 2.0));
        assert_eq!(
            diag.levels().stages(),
            vec![Stage {
                levels: 0..1,
                wide: true
            }]
        );
        let chain = TriFactor::<f64>::from_rows(50, true, |i| {
            (if i > 0 { vec![(i - 1, 1.0)] } else { vec![] }, 2.0)
        });
        assert_eq!(chain.levels().count(), 50);
        assert_eq!(
            chain.levels().stages(),
            vec![Stage {
                levels: 0..50,
                wide: false
            }]
        );
        assert_eq!(
            resolve(Trisolve::Auto, &[&chain.levels()]),
            Trisolve::Levels
        );
    }

    #[test]
    fn long_serial_runs_are_cut_at_the_step_budget() {
        // A band of 100 entries a row: 1680 narrow levels, 103 + 2 steps each.
        let band = TriFactor::<f64>::from_rows(1680, true, |i| {
            let strict = (i.saturating_sub(100)..i).map(|j| (j, -1.0)).collect();
            (strict, 200.0)
        });
        let lv = band.levels();
        assert_eq!(lv.steps[0], 2 + 3);
        assert_eq!(lv.steps[1000], 2 + 3 + 100);
        let stages = lv.stages();
        let total: u64 = lv.steps.iter().sum();
        assert_eq!(
            stages.len() as u64,
            total.div_ceil(STAGE_STEP_BUDGET).max(3)
        );
        let mut next = 0;
        for s in &stages {
            assert!(!s.wide);
            assert_eq!(s.levels.start, next, "stages cover the levels in order");
            next = s.levels.end;
            let steps: u64 = lv.steps[s.levels.clone()].iter().sum();
            assert!(steps <= STAGE_STEP_BUDGET, "{s:?}: {steps} steps");
        }
        assert_eq!(next, lv.count());
        // The cuts are not what `auto` weighs: one run of narrow levels, level-scheduled.
        assert_eq!(lv.runs(), 1);
        assert_eq!(resolve(Trisolve::Auto, &[&lv]), Trisolve::Levels);
    }

    /// [a⁻¹ ra; b⁻¹ rb] by the two separate solves of `how`.
    fn separate(a: &TriFactor<f64>, b: &TriFactor<f64>, how: Trisolve, r: &[f64]) -> Vec<f64> {
        let (mut xa, mut xb) = (vec![f64::NAN; a.n()], vec![f64::NAN; b.n()]);
        a.apply(how, &r[..a.n()], &mut xa);
        b.apply(how, &r[a.n()..], &mut xb);
        xa.extend(xb);
        xa
    }

    #[test]
    fn a_stacked_solve_is_the_two_separate_solves() {
        // BiCG's pairs: diag(L, Uᵀ) (both lower) and diag(U, Lᵀ) (both upper), orders and
        // level counts unequal.
        for (lower, na, nb) in [(true, 60, 45), (false, 37, 80)] {
            let (a, b) = (random(na, lower, 11), random(nb, lower, 12));
            let s = TriFactor::stack(&a, &b);
            assert_eq!((s.n(), s.is_lower(), s.blocks()), (na + nb, lower, 2));
            assert_eq!(s.stored(), a.stored() + b.stored());
            let r: Vec<f64> = (0..na + nb).map(|i| (i as f64 * 0.37).sin()).collect();
            let (la, lb) = (a.levels().count(), b.levels().count());
            for how in [
                Trisolve::Levels,
                Trisolve::Sweeps(1),
                Trisolve::Sweeps(3),
                Trisolve::Sweeps(la.max(lb) as u32),
            ] {
                let mut x = vec![f64::NAN; na + nb];
                s.apply(how, &r, &mut x);
                // The same operations row by row: bit-identical, not just close.
                assert_eq!(x, separate(&a, &b, how, &r), "lower={lower} {how}");
            }
            // Merged by level: level ℓ of the stack is level ℓ of both.
            let ls = s.levels();
            assert_eq!(ls.count(), la.max(lb));
            let (lva, lvb) = (a.levels(), b.levels());
            for l in 0..ls.count() {
                let mut rows: Vec<u32> =
                    ls.rows[ls.ptr[l] as usize..ls.ptr[l + 1] as usize].to_vec();
                rows.sort_unstable();
                let mut want: Vec<u32> = Vec::new();
                if l < la {
                    want.extend(&lva.rows[lva.ptr[l] as usize..lva.ptr[l + 1] as usize]);
                }
                if l < lb {
                    let from = &lvb.rows[lvb.ptr[l] as usize..lvb.ptr[l + 1] as usize];
                    want.extend(from.iter().map(|&r| r + na as u32));
                }
                want.sort_unstable();
                assert_eq!(rows, want, "level {l}");
            }
            // Narrow levels only: one single-workgroup stage, as each solve alone.
            assert_eq!(s.stages(&ls).len(), 1);
        }
    }

    #[test]
    fn stacked_stages_classify_levels_per_block_and_never_exceed_the_two_solves() {
        // Each block: a wide level (all rows independent) then a chain of narrow ones.
        let w = WIDE_LEVEL_ROWS + 5;
        let block = |chain: usize| {
            TriFactor::<f64>::from_rows(w + chain, true, move |i| {
                if i < w {
                    (vec![], 2.0)
                } else {
                    (vec![(i - 1, 0.5)], 2.0)
                }
            })
        };
        let (a, b) = (block(30), block(12));
        let stages = |t: &TriFactor<f64>| t.stages(&t.levels());
        assert_eq!(stages(&a), a.levels().stages());
        assert_eq!(stages(&a).len(), 2);
        let s = TriFactor::stack(&a, &b);
        // Stage k of the stack is stage k of both: the wide level 0, then every chain level.
        assert_eq!(
            stages(&s),
            vec![
                Stage {
                    levels: 0..1,
                    wide: true
                },
                Stage {
                    levels: 1..31,
                    wide: false
                }
            ]
        );
        // Levels narrow in each block stay narrow even when both together exceed the width
        // (Levels::stages of the merged widths would split the run into wide levels).
        let half = |n: usize| {
            TriFactor::<f64>::from_rows(n, true, move |i| {
                (
                    if i % 2 == 1 {
                        vec![(i - 1, 0.5)]
                    } else {
                        vec![]
                    },
                    2.0,
                )
            })
        };
        let (c, d) = (
            half(2 * (WIDE_LEVEL_ROWS - 1)),
            half(2 * (WIDE_LEVEL_ROWS - 1)),
        );
        let cd = TriFactor::stack(&c, &d);
        assert_eq!(stages(&c).len(), 1);
        assert_eq!(stages(&cd).len(), 1);
        assert_eq!(
            cd.levels().stages().len(),
            2,
            "merged widths alone would split"
        );
        // Wide levels at different places: never more than the two solves together.
        let tail = TriFactor::<f64>::from_rows(w + 20, true, move |i| {
            if i < 20 {
                (if i > 0 { vec![(i - 1, 0.5)] } else { vec![] }, 2.0)
            } else {
                (vec![(19, 0.5)], 2.0)
            }
        });
        let mixed = TriFactor::stack(&a, &tail);
        assert!(stages(&mixed).len() <= stages(&a).len() + stages(&tail).len());
        let r: Vec<f64> = (0..mixed.n()).map(|i| 1.0 + (i % 7) as f64).collect();
        let mut x = vec![0.0; mixed.n()];
        mixed.solve(&r, &mut x);
        assert_eq!(x, separate(&a, &tail, Trisolve::Levels, &r));
    }

    #[test]
    #[should_panic(expected = "must both be lower or both upper")]
    fn a_lower_and_an_upper_factor_do_not_stack() {
        TriFactor::stack(&random(5, true, 1), &random(5, false, 2));
    }
}
