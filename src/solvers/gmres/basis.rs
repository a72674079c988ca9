//! GMRES's storage on the GPU and the binding of its kernels: the *pool* holding the Krylov
//! basis v_0 … v_m beside the work vectors ([`Pool`]), the *cycle buffer* holding R, ξ and
//! the estimates ([`CycleLayout`]), and [`GmresSystem`], which uploads them with A and the
//! preconditioner, binds any GMRES kernel to them and computes the Gram matrix VᵀV behind
//! `orthogonality_loss`.

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::ds::TrueResidualDs;
use crate::gpu::kernels::{Params, solver_kernel};
use crate::gpu::shader::partials_entries;
use crate::gpu::{Batch, Engine, GpuMatrix, Kernel};
use crate::matrix::Csr;
use crate::precond::SolverPrecond;
use crate::solvers::driver::sum_component;
use crate::solvers::pool::PoolBuffers;
use crate::solvers::system::FactoredApply;
use crate::solvers::{CheckMode, GramSchmidt, Precond, Side, SolveOptions, SolveReport, Variant};

// Cycle-buffer header (mirrors the `GM_H_*` constants of the shaders).
pub(super) const H_STOP: usize = 0;
pub(super) const H_STEP: usize = 1;
pub(super) const H_RR: usize = 2;
pub(super) const H_RHO: usize = 3;
const H_THR: usize = 4;
const H_TRUNC: usize = 5;
const H_EPS: usize = 6;
const HEADER: usize = 8;

// Stop codes written to `H_STOP` (`GM_STOP_*`).
pub(super) const STOP_NONE: u32 = 0;
pub(super) const STOP_CONVERGED: u32 = 1;
pub(super) const STOP_ESTIMATE: u32 = 2;
pub(super) const STOP_BREAKDOWN: u32 = 3;
pub(super) const STOP_NONFINITE_AV: u32 = 4;
pub(super) const STOP_NONFINITE_XI: u32 = 5;
pub(super) const STOP_NONFINITE_RR: u32 = 6;
/// p(1)-GMRES: R_{s,s}² = ‖u_s‖² − Σ R_{j,s}² lost its accuracy; the cycle keeps s − 1 steps.
pub(super) const STOP_LOST: u32 = 7;

/// `gmres_update_x` writes pool[dst] = u instead of adding (`GM_FLAG_STORE`).
pub(super) const UPDATE_STORE: u32 = 1;

// Partials slots (`GM_SLOT_*`): 0 ‖r‖², 1 gmres_spmv_dot / single classical dots, 2 ‖w‖² after
// Gram–Schmidt, 3… gmres_basis_dots (four inner products per slot).
pub(super) const SLOT_RESIDUAL: u32 = 0;
pub(super) const SLOT_DOT: u32 = 1;
pub(super) const SLOT_DOTS: u32 = 3;

/// Where the vectors are in the pool (vector k at offset k·n): v_0 … v_m are 0 … m, then r
/// (the residual), z (D⁻¹v with Jacobi), x, b and, for the classical variant, w; p(1)-GMRES
/// keeps u_1 … u_m (u_j = A v_{j−1}) after b instead.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pool {
    m: usize,
}

/// The most steps p(1)-GMRES's cycle takes (`P1_MAX` of `gmres_p1_step.wgsl`: a step's
/// coefficients live in workgroup memory).
pub const P1_MAX_RESTART: usize = 128;

impl Pool {
    pub(super) fn r(self) -> u32 {
        (self.m + 1) as u32
    }
    pub(super) fn z(self) -> u32 {
        (self.m + 2) as u32
    }
    pub(super) fn x(self) -> u32 {
        (self.m + 3) as u32
    }
    pub(super) fn b(self) -> u32 {
        (self.m + 4) as u32
    }
    pub(super) fn w(self) -> u32 {
        (self.m + 5) as u32
    }
    /// u_1 (p(1)-GMRES; u_j at u1 + j − 1).
    pub(super) fn u1(self) -> u32 {
        (self.m + 5) as u32
    }
    /// Vectors in the pool: m + 5 (pipelined, fused), m + 6 (classical, with w) or 2m + 5
    /// (p1, with u_1 … u_m).
    fn len(self, variant: Variant) -> usize {
        match variant {
            Variant::Classical => self.m + 6,
            Variant::P1 => 2 * self.m + 5,
            _ => self.m + 5,
        }
    }
}

/// Where things are in the cycle buffer (`scalars` of the GMRES kernels), for restart length
/// m and g reduction workgroups:
///
/// `[header (8) | step record ×2 (g + 4 each) | η: k, η_r, η_1…η_m | per step j = 0…m: ξ_j,
/// estimate_j, ‖A v_{j−1}‖², – | R (m+1)², R_{j,i} at j + (m+1)i | coefficients (m+1) |
/// R column being accumulated (m+1) | the constants [0, 1]]`.
///
/// The constants are the coefficients `[k, η_r]` with which `gmres_update_x` adds one pool
/// vector to x (the last launch of the update with a factored M).
///
/// The step records (`[‖A v_{i−1}‖², R_{i,i}, –, –, ξ_i partials…]`, step i in record i mod 2)
/// come right after the header, so that `paper` mode reads header + record in one readback.
#[derive(Debug, Clone, Copy)]
pub(super) struct CycleLayout {
    m: usize,
    pub(super) g: usize,
    pub(super) stride: usize,
    pub(super) eta: usize,
    pub(super) steps: usize,
    pub(super) r: usize,
    pub(super) tmp: usize,
    pub(super) acc: usize,
    pub(super) add: usize,
    len: usize,
}

impl CycleLayout {
    fn new(m: usize, g: usize) -> Self {
        let stride = g + 4;
        let eta = HEADER + 2 * stride;
        let steps = eta + m + 2;
        let r = steps + 4 * (m + 1);
        let tmp = r + (m + 1) * (m + 1);
        let acc = tmp + m + 1;
        let add = acc + m + 1;
        CycleLayout {
            m,
            g,
            stride,
            eta,
            steps,
            r,
            tmp,
            acc,
            add,
            len: add + 2,
        }
    }
    /// Step i's record (ring of two).
    pub(super) fn rec(&self, i: usize) -> usize {
        HEADER + (i % 2) * self.stride
    }
    /// Step i's scalars: ξ_i, estimate_i, ‖A v_{i−1}‖².
    pub(super) fn step(&self, i: usize) -> usize {
        self.steps + 4 * i
    }
    /// R_{j,i}.
    pub(super) fn r_at(&self, j: usize, i: usize) -> usize {
        self.r + j + (self.m + 1) * i
    }
    /// ξ_i from the partial sums in step i's record, in a readback `c` of the cycle buffer
    /// from its start.
    pub(super) fn record_xi<T: Scalar>(&self, c: &[T], i: usize) -> f64 {
        let rec = self.rec(i);
        (0..self.g).map(|w| c[rec + 4 + w].as_f64()).sum()
    }
}

/// In-place z = M⁻¹z on the pool vectors r and w, for left preconditioning: Jacobi as
/// `gmres_basis_diag` launches (bound to r and w), a factored M through its [`FactoredApply`]; and the
/// first stage of ‖M⁻¹r‖² (replacing `gmres_residual`'s ‖r‖² in the residual slot).
struct LeftApply {
    diag: Option<(Kernel, wgpu::BindGroup, wgpu::BindGroup)>,
    norm_r: wgpu::BindGroup,
}

/// Everything resident on the GPU for one solve: A, M, the pool, the cycle buffer, the
/// status word and the partial sums, and the batched inner-product kernel every variant uses.
pub(super) struct GmresSystem<'e, T> {
    pub(super) engine: &'e Engine,
    pub(super) n: usize,
    /// The restart length m (at most n).
    pub(super) m: usize,
    pub(super) g: u32,
    pub(super) lay: CycleLayout,
    pub(super) at: Pool,
    pub(super) mode: CheckMode,
    pub(super) gs: GramSchmidt,
    variant: Variant,
    a: GpuMatrix<T>,
    precond: SolverPrecond<T>,
    /// The apply of a factored M (`None` for M = I and Jacobi, which the kernels fuse).
    factored: Option<FactoredApply>,
    /// Left preconditioning (M ≠ I): the cycles run on M⁻¹A, their residual is M⁻¹(b − Ax).
    left: Option<LeftApply>,
    pub(super) pool: PoolBuffers,
    state: wgpu::Buffer,
    partials: wgpu::Buffer,
    pub(super) cyc: wgpu::Buffer,
    /// `gmres_basis_dots`: first stage of ⟨v_j, target⟩ for a range of j, four per slot.
    pub(super) dots: Kernel,
}

impl<'e, T: Scalar> GmresSystem<'e, T> {
    /// Uploads A (format recorded in `report`), M, b and x0 (into the pool) and the cycle
    /// buffer's constants; a pool larger than one storage binding goes over two (and one
    /// larger than two is refused).
    pub(super) fn upload(
        engine: &'e Engine,
        a: &Csr<T>,
        b: &[T],
        x0: Option<&[T]>,
        opts: &SolveOptions,
        threshold: f64,
        report: &mut SolveReport,
    ) -> Result<Self> {
        let gpu_a = crate::solvers::reuse::upload_matrix(engine, a, opts, report)?;
        let n = a.nrows();
        let m = opts.restart.min(n).max(1);
        if opts.variant == Variant::P1 && m > P1_MAX_RESTART {
            return Err(crate::base::error::KrylovError::InvalidOption(format!(
                "p(1)-GMRES keeps a step's Gram-Schmidt coefficients in workgroup memory: \
                 restart at most {P1_MAX_RESTART} (got {m}; use --variant fused)"
            )));
        }
        let at = Pool { m };
        let vectors = at.len(opts.variant);
        let pool_what = format!(
            "GMRES({m}) Krylov basis and work vectors ({vectors} vectors of {n} entries; use \
             a smaller restart length)"
        );
        let pool = PoolBuffers::new::<T>(engine, &pool_what, vectors, n)?;
        let pool_parts = pool.parts();
        let g = engine.fused_groups(n, gpu_a.passes());
        report.workgroups = g;
        let lay = CycleLayout::new(m, g as usize);
        let mut init = vec![T::zero(); lay.len];
        init[H_THR] = T::from_f64(threshold);
        init[H_TRUNC] = T::from_f64(T::PRECISION.epsilon().cbrt());
        init[H_EPS] = T::from_f64(T::PRECISION.epsilon());
        init[lay.add + 1] = T::one();
        // p(1)-GMRES alternates two sets of slots between launches (gmres_p1_step.wgsl).
        let slots = match opts.variant {
            Variant::P1 => SLOT_DOTS as usize + 4 * (m.div_ceil(8) + 1),
            _ => SLOT_DOTS as usize + m.div_ceil(4) + 1,
        };
        let precond = crate::solvers::reuse::precond(engine, a, opts)?;
        crate::solvers::system::record_precond(report, &precond);
        let dots = solver_kernel::<T>(
            engine,
            "gmres_basis_dots",
            crate::gpu::ShaderConfig {
                pool_parts,
                ..gpu_a.shader_config(engine)
            },
        )?;
        let state = engine.storage_zeroed::<u32>("gmres state", 4)?;
        let compensated = gpu_a.shader_config(engine).compensated;
        let partials = engine.storage_zeroed::<[T; 4]>(
            "gmres partials",
            partials_entries(slots as u32, g, compensated),
        )?;
        let cyc = engine.storage_from(
            &format!(
                "GMRES({m}) cycle buffer (R alone is (m + 1)² entries; use a smaller restart \
                 length)"
            ),
            &init,
        )?;
        // A factored M's launches bind the GMRES state: they stop with the cycle.
        let config = gpu_a.shader_config(engine);
        let factored = crate::solvers::system::factored_apply::<T>(
            engine, config, &precond, &state, &partials, &cyc, n, g,
        )?;
        let left = opts.side == Side::Left && opts.precond != Precond::None;
        let mut sys = GmresSystem {
            engine,
            n,
            m,
            g,
            lay,
            at,
            mode: opts.check_mode,
            gs: opts.gs,
            variant: opts.variant,
            a: gpu_a,
            precond,
            factored,
            left: None,
            pool,
            state,
            partials,
            cyc,
            dots,
        };
        if left {
            let r = sys.at.r() as usize;
            let w = sys.at.w();
            let diag = match sys.precond.fused_diagonal() {
                true => {
                    let k = sys.kernel("gmres_basis_diag")?;
                    let on = |v: u32| {
                        let p = Params {
                            dst: v,
                            num: v,
                            ..sys.params()
                        };
                        sys.bind(&k, p)
                    };
                    let (br, bw) = (on(r as u32), on(w));
                    Some((k, br, bw))
                }
                false => None,
            };
            sys.left = Some(LeftApply {
                diag,
                norm_r: sys.bind_dots(r as u32, r, r + 1, SLOT_RESIDUAL),
            });
        }
        // b and x0 into the pool (one upload each; x0 = 0 is already there).
        let (buf, at) = sys.pool.locate(sys.at.b() as usize);
        engine.write(buf, at, b);
        if let Some(x0) = x0 {
            let (buf, at) = sys.pool.locate(sys.at.x() as usize);
            engine.write(buf, at, x0);
        }
        if sys.pool.is_split() {
            report.notes.push(format!(
                "the GMRES({m}) basis and work vectors ({vectors} vectors of {n} entries) \
                 exceed one storage binding: they are held in {} bindings",
                sys.pool.parts()
            ));
        }
        Ok(sys)
    }

    /// The variant the system was laid out for.
    pub(super) fn variant(&self) -> Variant {
        self.variant
    }

    /// Whether the kernels apply D⁻¹ (Jacobi right preconditioning, `Params.jacobi`).
    pub(super) fn jacobi(&self) -> bool {
        self.precond.fused_diagonal() && self.left.is_none()
    }

    /// Whether M is applied on the left (the cycles run on M⁻¹A).
    pub(super) fn left(&self) -> bool {
        self.left.is_some()
    }

    /// Left preconditioning: r = M⁻¹r after `gmres_residual` (in place) and the first stage
    /// of ‖M⁻¹r‖² into the residual slot; nothing on the right.
    pub(super) fn record_left_residual(&self, batch: &mut Batch<'_>) {
        if let Some(l) = &self.left {
            self.record_left_in_place(batch, self.at.r());
            self.dispatch(batch, &self.dots, &l.norm_r);
        }
    }

    /// Left preconditioning: pool vector `v` (r or w) = M⁻¹v in place; nothing on the right.
    pub(super) fn record_left_in_place(&self, batch: &mut Batch<'_>, v: u32) {
        if let Some(l) = &self.left {
            match &l.diag {
                Some((k, br, bw)) => {
                    self.dispatch(batch, k, if v == self.at.r() { br } else { bw })
                }
                None => self.record_apply(batch, v, v),
            }
        }
    }

    /// ‖M⁻¹b‖ (f64 sum of the GPU's partials; r is overwritten): the scale of the left
    /// threshold τ_L = max(rtol·‖M⁻¹b‖, atol), as the CPU reference defines it.
    pub(super) fn left_norm_b(&self) -> Result<f64> {
        // r = 1·b: `gmres_update_x` storing, with the constant coefficients [0, 1] (a copy
        // inside one buffer is not a buffer copy wgpu allows).
        let copy = self.kernel("gmres_update_x")?;
        let bg = self.bind(
            &copy,
            Params {
                comp: self.lay.add as u32,
                num: self.at.b(),
                dst: self.at.r(),
                flags: UPDATE_STORE,
                ..self.params()
            },
        );
        let mut batch = self.engine.begin("gmres |M^-1 b|");
        // The apply kernels test the status word: open it.
        self.record_reopen(&mut batch);
        self.dispatch(&mut batch, &copy, &bg);
        self.record_left_residual(&mut batch);
        self.read_sum(batch, SLOT_RESIDUAL)
    }

    /// Sets the threshold the kernels test (`H_THR`; one upload).
    pub(super) fn set_threshold(&self, threshold: f64) {
        self.engine
            .write(&self.cyc, H_THR, &[T::from_f64(threshold)]);
    }

    /// Whether M is factored (applied by [`Self::record_apply`] between launches).
    pub(super) fn factored(&self) -> bool {
        self.factored.is_some()
    }

    /// Whether M ≠ I (the steps multiply A by z = M⁻¹v_{i−1}).
    pub(super) fn preconditioned(&self) -> bool {
        self.jacobi() || self.factored()
    }

    /// Sets the status word to running (0) on the GPU: the update of x is recorded before
    /// `gmres_residual` reopens the next cycle, but its triangular solves, like every solver
    /// kernel, skip their work while the previous cycle's stop is in the status word.
    pub(super) fn record_reopen(&self, batch: &mut Batch<'_>) {
        batch.clear(&self.state, 0, 4);
    }

    /// Records pool vector `dst` = M⁻¹ · pool vector `src` for a factored M: copy out, the
    /// triangular solves, copy back (`dst` may equal `src`). Nothing without a factored M.
    pub(super) fn record_apply(&self, batch: &mut Batch<'_>, src: u32, dst: u32) {
        if let Some(f) = &self.factored {
            let size = std::mem::size_of::<T>() as u64;
            let bytes = self.n as u64 * size;
            let (sb, so) = self.pool.locate(src as usize);
            batch.copy(sb, so as u64 * size, &f.input, 0, bytes);
            f.step.record(batch);
            let (db, dof) = self.pool.locate(dst as usize);
            batch.copy(&f.output, 0, db, dof as u64 * size, bytes);
        }
    }

    fn dinv(&self) -> &wgpu::Buffer {
        self.precond.dinv()
    }

    /// Compiles GMRES kernel `name` for A's storage format.
    pub(super) fn kernel(&self, name: &str) -> Result<Kernel> {
        solver_kernel::<T>(self.engine, name, self.shader_config())
    }

    /// The configuration GMRES's kernels are compiled with: A's, over the pool's bindings.
    pub(super) fn shader_config(&self) -> crate::gpu::ShaderConfig {
        crate::gpu::ShaderConfig {
            pool_parts: self.pool.parts(),
            ..self.a.shader_config(self.engine)
        }
    }

    /// The launch parameters every GMRES kernel reads (n, groups, jacobi).
    pub(super) fn params(&self) -> Params {
        Params {
            n: self.n as u32,
            groups: self.g,
            jacobi: self.jacobi() as u32,
            ..Default::default()
        }
    }

    /// A bind group of `kernel` with launch parameters `p` (every GMRES kernel binds from the
    /// same list and keeps what it uses).
    pub(super) fn bind(&self, kernel: &Kernel, p: Params) -> wgpu::BindGroup {
        self.bind_with(kernel, p, &self.partials)
    }

    fn bind_with(&self, kernel: &Kernel, p: Params, partials: &wgpu::Buffer) -> wgpu::BindGroup {
        let params = self.engine.uniform_from("gmres params", &p);
        let mut e = vec![
            (0, &self.state),
            (1, partials),
            (2, &self.cyc),
            (4, &params),
            (11, self.dinv()),
        ];
        e.extend(self.pool.entries());
        e.extend(self.a.bindings(false));
        self.engine.bind_group_at(kernel, &e)
    }

    /// `gmres_basis_dots` over j in [j0, j1) against pool vector `target`, into `slot`….
    pub(super) fn bind_dots(
        &self,
        target: u32,
        j0: usize,
        j1: usize,
        slot: u32,
    ) -> wgpu::BindGroup {
        self.bind(&self.dots, self.dots_params(target, j0, j1, slot))
    }

    fn dots_params(&self, target: u32, j0: usize, j1: usize, slot: u32) -> Params {
        Params {
            dst: target,
            num: j0 as u32,
            den: j1 as u32,
            slot,
            ..self.params()
        }
    }

    /// Records `kernel` over the reduction workgroups.
    pub(super) fn dispatch(&self, batch: &mut Batch<'_>, kernel: &Kernel, bg: &wgpu::BindGroup) {
        batch.dispatch(kernel, bg, self.g);
    }

    /// Submits `batch` and reads partials slots `slot … slot + count − 1`.
    pub(super) fn read_slots(&self, batch: Batch<'_>, slot: u32, count: usize) -> Result<Vec<T>> {
        let g = self.g as usize;
        batch.submit_and_read(&self.partials, 4 * slot as usize * g, 4 * count * g)
    }

    /// Submits `batch` and finishes the one inner product in partials slot `slot` (f64).
    pub(super) fn read_sum(&self, batch: Batch<'_>, slot: u32) -> Result<f64> {
        let parts = self.read_slots(batch, slot, 1)?;
        Ok(sum_component(&parts, self.g as usize, 0, 0))
    }

    /// The solution x, from the pool (one readback).
    pub(super) fn read_x(&self) -> Result<Vec<T>> {
        let (buf, at) = self.pool.locate(self.at.x() as usize);
        self.engine.read(buf, at, self.n)
    }

    /// ‖I − VᵀV‖_F over v_1 … v_k (Gram matrix on the GPU, one readback). `norms`: the
    /// pool holds ‖w_j‖ v_j (fused GMRES): the Gram matrix is divided by them (and k is
    /// at most their number).
    pub(super) fn orthogonality_loss(
        &self,
        k: usize,
        norms: Option<&[f64]>,
    ) -> Result<Option<f64>> {
        let k = norms.map_or(k, |d| k.min(d.len()));
        let norm = |j: usize| norms.map_or(1.0, |d| d[j - 1]);
        if k == 0 {
            return Ok(None);
        }
        let g = self.g as usize;
        let bases: Vec<usize> = (1..=k)
            .scan(0, |acc, j| {
                let b = *acc;
                *acc += j.div_ceil(4);
                Some(b)
            })
            .collect();
        let slots = bases[k - 1] + k.div_ceil(4);
        let compensated = self.a.shader_config(self.engine).compensated;
        let gram = self.engine.storage_zeroed::<[T; 4]>(
            "gmres Gram partials",
            partials_entries(slots as u32, g as u32, compensated),
        )?;
        let bgs: Vec<wgpu::BindGroup> = (1..=k)
            .map(|j| {
                self.bind_with(
                    &self.dots,
                    self.dots_params(j as u32, 1, j + 1, bases[j - 1] as u32),
                    &gram,
                )
            })
            .collect();
        // The kernels test the status word: reopen it.
        self.engine.write(&self.state, 0, &[0u32]);
        let mut batch = self.engine.begin("gmres gram");
        for bg in &bgs {
            self.dispatch(&mut batch, &self.dots, bg);
        }
        let parts: Vec<T> = batch.submit_and_read(&gram, 0, 4 * slots * g)?;
        let mut sum = 0.0;
        for j in 1..=k {
            for l in 1..=j {
                let q = l - 1;
                let v = sum_component(&parts, g, bases[j - 1] + q / 4, q % 4) / (norm(j) * norm(l));
                let d = if l == j { 1.0 - v } else { v };
                sum += if l == j { d * d } else { 2.0 * d * d };
            }
        }
        Ok(Some(sum.sqrt()))
    }
}

impl<T: Scalar> GmresSystem<'_, T> {
    /// The f32 true-residual guard's kernel: ‖b − Ax‖² in double-single from the pool's x and
    /// b as they are (`true_residual_ds`, [`TrueResidualDs`]), without a download of x.
    pub(super) fn true_residual_ds(&self) -> Result<TrueResidualDs> {
        TrueResidualDs::at(
            self.engine,
            &self.a,
            self.pool.locate(self.at.x() as usize),
            self.pool.locate(self.at.b() as usize),
        )
    }
}
