//! CA-GMRES's storage on the GPU and the recording of its kernels: the *pool* (the basis
//! q₀ … q_m, then x, b and a scratch vector, vector k at k·n, over one or several bindings:
//! [`PoolBuffers`]), the *cycle buffer* of small matrices (laid out by [`CaLayout`],
//! `layout.rs`), and [`CaSystem`], which records `ca_powers`, `ca_block_dots` +
//! `ca_block_finish`, `ca_block_update` on pool ranges and submits them only when the host
//! needs a value (one submit per host sync, plus one before an upload that later launches
//! read). A block's BOrth and TSQR launches (CAQR's `ca_tsqr_leaf` / `ca_tsqr_apply`
//! included) are recorded in `system/borth.rs`; submits, reads and writes are in
//! `system/transfer.rs`.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::kernels::{Params, solver_kernel};
use crate::gpu::shader::partials_entries;
use crate::gpu::{Batch, Engine, GpuMatrix, Kernel};
use crate::matrix::Csr;
use crate::precond::SolverPrecond;
use crate::solvers::pool::PoolBuffers;
use crate::solvers::system::FactoredApply;
use crate::solvers::{SolveOptions, SolveReport};

use super::layout::{
    CaLayout, STAGED_MAX_WG, ca_groups, caqr_leaves, powers_prev, staged_dots_fit,
};

mod borth;
mod transfer;

/// `ca_block_finish`: also store D at the accumulator (`CA_ACC_STORE`) or add it there.
pub(crate) const ACC_STORE: u32 = 1;
pub(crate) const ACC_ADD: u32 = 2;
/// `ca_block_finish`: the last row of D is not accumulated (`CA_ACC_SKIP_LAST`).
pub(crate) const ACC_SKIP_LAST: u32 = 4;
/// `ca_block_finish`: only the rows of D above the block W = [y0, y0+ny) are accumulated, at
/// their own leading dimension (`CA_ACC_ROWS`: D = [Q, W]ᵀW, its top rows are C).
pub(crate) const ACC_ROWS: u32 = 8;
/// `ca_block_update` flags (`CA_*` in the WGSL).
pub(crate) const T_IDENTITY: u32 = 1;
pub(crate) const T_RSQRT: u32 = 2;
pub(crate) const NO_X: u32 = 4;
pub(crate) const C_ADD: u32 = 8;
pub(crate) const STORE: u32 = 16;
pub(crate) const DINV: u32 = 32;
/// `ca_block_update`: an Arnoldi step's second pass and normalisation (`CA_PYTHAG`).
pub(crate) const PYTHAG: u32 = 64;
/// `ca_powers`: the SpMV reads M⁻¹·pool[src] from the apply's output (`CA_VIN`).
const VIN: u32 = 16;
/// The largest block `ca_block_update` takes (`CA_MAX_S`).
pub const MAX_S: usize = 16;
/// Whether a deferred block is an Arnoldi step (one vector, a Gram–Schmidt TSQR): its
/// second BOrth pass and its normalisation share one reduction
/// ([`CaSystem::record_deferred_block`]).
pub(crate) fn arnoldi_step(steps: usize, tsqr: crate::base::Tsqr) -> bool {
    use crate::base::Tsqr;
    steps == 1 && matches!(tsqr, Tsqr::Mgs | Tsqr::Cgs | Tsqr::Cgs2)
}

/// Which kernel a cached bind group belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Which {
    Powers,
    Dots,
    DotsPairs,
    DotsStaged,
    Finish,
    Update,
    Leaf,
    Apply,
    Cholqr,
}

/// Everything resident on the GPU for one CA-GMRES solve, and the batch being recorded.
pub(crate) struct CaSystem<'e, T> {
    pub(crate) engine: &'e Engine,
    pub(crate) n: usize,
    pub(crate) m: usize,
    pub(crate) s: usize,
    g: u32,
    /// Leaves of a CAQR ([`caqr_leaves`]; 0 unless the solve runs CAQR).
    pub(crate) leaves: usize,
    pub(crate) lay: CaLayout,
    /// A on this device; `None` for a distributed solve's row block
    /// ([`Self::for_rows`]), whose products `solvers::dist` launches itself.
    pub(crate) a: Option<GpuMatrix<T>>,
    precond: SolverPrecond<T>,
    /// A factored M's apply (`ca_powers` binds its output as `vin`).
    factored: Option<FactoredApply>,
    /// What `ca_powers` binds as `vin` without a factored M (it must not be the pool, which
    /// it binds read-write).
    unused_vin: wgpu::Buffer,
    /// The basis, x, b and the scratch vector, over several bindings where one cannot hold them.
    pub(crate) pool: PoolBuffers,
    partials: wgpu::Buffer,
    pub(crate) cyc: wgpu::Buffer,
    powers: Kernel,
    dots: Kernel,
    /// `ca_block_dots_pairs`: the same inner products, two rows per step, where each thread
    /// has eight rows or more ([`Self::dots_in_pairs`]); compiled only for such systems.
    dots_pairs: Option<Kernel>,
    /// `ca_block_dots_staged`: the same inner products, every column read once per launch
    /// through workgroup memory, where its stage holds the block ([`staged_dots_fit`]);
    /// compiled for workgroups of at most [`STAGED_MAX_WG`] threads and only where the pairs
    /// kernel does not take every launch.
    dots_staged: Option<Kernel>,
    finish: Kernel,
    update: Kernel,
    /// `ca_cholqr`: CholQR's Cholesky and R⁻¹ on the device, for deferred CholQR cycles.
    cholqr: Kernel,
    /// `ca_tsqr_leaf` and `ca_tsqr_apply`, compiled when the solve runs CAQR.
    caqr: Option<(Kernel, Kernel)>,
    /// Bind groups by kernel and parameters: made once (the first cycle and the set-up's
    /// warm-up make every one a full cycle needs), reused by every later block.
    bind_groups: RefCell<HashMap<(Which, [u32; 12]), wgpu::BindGroup>>,
    batch: RefCell<Option<Batch<'e>>>,
    /// Set while [`Self::warm_up`] makes bind groups: nothing is recorded.
    warming: std::cell::Cell<bool>,
    /// Launches recorded since the last submit ([`Self::submit_after`]).
    unsubmitted: std::cell::Cell<usize>,
    /// Whether the block inner products may run as `ca_block_dots_staged` (off: always the
    /// tile kernels; the kernel tests compare the two).
    pub(crate) staged_dots: std::cell::Cell<bool>,
}

impl<'e, T: Scalar> CaSystem<'e, T> {
    /// Pool index of x.
    pub(crate) fn x(&self) -> usize {
        self.m + 1
    }
    /// Pool index of b.
    pub(crate) fn b(&self) -> usize {
        self.m + 2
    }
    /// Pool index of the scratch vector (u = Q y before M⁻¹ with a factored M).
    pub(crate) fn z(&self) -> usize {
        self.m + 3
    }
    /// The buffer the kernels bind as D⁻¹ (M's, or a dummy without a diagonal form).
    pub(crate) fn dinv(&self) -> &wgpu::Buffer {
        self.precond.dinv()
    }
    /// Whether M = D⁻¹ is fused into `ca_powers` and x's update.
    pub(crate) fn jacobi(&self) -> bool {
        self.precond.fused_diagonal()
    }

    /// Uploads A (format recorded in `report`), b and x0 into the pool (over several bindings
    /// where one cannot hold it); refuses a pool larger than the kernels can bind
    /// ([`PoolBuffers::new`]) and blocks larger than [`MAX_S`].
    pub(crate) fn upload(
        engine: &'e Engine,
        a: &Csr<T>,
        b: &[T],
        x0: Option<&[T]>,
        opts: &SolveOptions,
        report: &mut SolveReport,
    ) -> Result<Self> {
        let n = a.nrows();
        let ca = opts.ca();
        let (s, m) = (ca.s, ca.m);
        if s > MAX_S {
            return Err(KrylovError::InvalidOption(format!(
                "CA-GMRES block size s = {s} exceeds the GPU kernels' limit {MAX_S}"
            )));
        }
        if m + 1 > n {
            return Err(KrylovError::InvalidOption(format!(
                "CA-GMRES restart length m = {m} needs at least m + 1 = {} unknowns (n = {n}); \
                 choose a smaller --restart",
                m + 1
            )));
        }
        let gpu_a = crate::solvers::reuse::upload_matrix(engine, a, opts, report)?;
        let config = gpu_a.shader_config(engine);
        let wg = engine.tuning().workgroup_size;
        let g = ca_groups(n, wg, engine.fused_groups(n, gpu_a.passes()));
        report.workgroups = g;
        let precond = crate::solvers::reuse::precond(engine, a, opts)?;
        crate::solvers::system::record_precond(report, &precond);
        let sys = Self::build(engine, Some(gpu_a), precond, config, g, b, x0, opts)?;
        if sys.pool.is_split() {
            report.notes.push(format!(
                "the CA-GMRES({}, {}) basis, x, b and scratch vector ({} vectors of {} entries) \
                 exceed one storage binding: they are held in {} bindings",
                sys.s,
                sys.m,
                sys.m + 4,
                sys.n,
                sys.pool.parts()
            ));
        }
        Ok(sys)
    }

    /// The pool, cycle buffer and block kernels of one row block of a distributed CA-GMRES
    /// (`solvers::dist`): `b` and `x0` are the block's rows, `diag` its diagonal block
    /// (what a Jacobi M is built from). The matrix powers' products are the distributed
    /// layer's; everything else (BOrth, the TSQR's updates, x's update) runs here on the
    /// block's rows, its inner products as this block's share of the global ones.
    pub(crate) fn for_rows(
        engine: &'e Engine,
        diag: &Csr<T>,
        b: &[T],
        x0: Option<&[T]>,
        opts: &SolveOptions,
    ) -> Result<Self> {
        let n = diag.nrows();
        let ca = opts.ca();
        if ca.s > MAX_S || ca.m + 1 > n {
            return Err(KrylovError::InvalidOption(format!(
                "CA-GMRES({}, {}) on a row block of {n} rows: s ≤ {MAX_S} and m + 1 ≤ the rows of \
                 every block (use fewer devices or a smaller --restart)",
                ca.s, ca.m
            )));
        }
        let config = engine.shader_config(T::PRECISION);
        let g = ca_groups(
            n,
            engine.tuning().workgroup_size,
            engine.reduction_groups(n),
        );
        let precond = crate::solvers::reuse::precond(engine, diag, opts)?;
        Self::build(engine, None, precond, config, g, b, x0, opts)
    }

    /// Allocates the pool (b and x0 written) and the cycle buffer, and compiles the kernels.
    #[allow(clippy::too_many_arguments)]
    fn build(
        engine: &'e Engine,
        gpu_a: Option<GpuMatrix<T>>,
        precond: SolverPrecond<T>,
        config: crate::gpu::ShaderConfig,
        g: u32,
        b: &[T],
        x0: Option<&[T]>,
        opts: &SolveOptions,
    ) -> Result<Self> {
        let n = b.len();
        let ca = opts.ca();
        let (s, m) = (ca.s, ca.m);
        let vectors = m + 4;
        let pool_what = format!(
            "CA-GMRES({s}, {m}) Krylov basis, x, b and a scratch vector ({vectors} vectors of {n} \
             entries; use a smaller restart length)"
        );
        let pool = PoolBuffers::new::<T>(engine, &pool_what, vectors, n)?;
        // The kernels address the pool through gmres_pool.wgsl: several bindings where it
        // needs them.
        let config = crate::gpu::ShaderConfig {
            pool_parts: pool.parts(),
            ..config
        };
        let in_pairs = dots_in_pairs(n, g, engine.tuning().workgroup_size);
        let caqr = ca.tsqr == crate::base::Tsqr::Caqr;
        let leaves = if caqr { caqr_leaves(n, s, g) } else { 0 };
        let lay = CaLayout::new(m, s, leaves);
        let caqr = if caqr {
            Some((
                solver_kernel::<T>(engine, "ca_tsqr_leaf", config)?,
                solver_kernel::<T>(engine, "ca_tsqr_apply", config)?,
            ))
        } else {
            None
        };
        let slots = (m + 1).div_ceil(4) * s + s;
        let partials = engine.storage_zeroed::<[T; 4]>(
            "cagmres partials",
            partials_entries(slots as u32, g, config.compensated),
        )?;
        // A factored M's launches bind a status word, always "running" here: the host stops
        // CA-GMRES.
        let state = engine.storage_zeroed::<u32>("cagmres state", 4)?;
        let scalars = engine.storage_zeroed::<T>("cagmres apply scalars", 8)?;
        let factored = crate::solvers::system::factored_apply::<T>(
            engine, config, &precond, &state, &partials, &scalars, n, g,
        )?;
        let sys = CaSystem {
            engine,
            n,
            m,
            s,
            g,
            leaves,
            lay,
            powers: solver_kernel::<T>(engine, "ca_powers", config)?,
            dots: solver_kernel::<T>(engine, "ca_block_dots", config)?,
            // Each block inner-product kernel is compiled only where the selection rule in
            // `record_dots` can take it (a compile is a set-up cost on every solve).
            dots_pairs: if in_pairs {
                Some(solver_kernel::<T>(engine, "ca_block_dots_pairs", config)?)
            } else {
                None
            },
            dots_staged: if !in_pairs && config.workgroup_size <= STAGED_MAX_WG {
                Some(solver_kernel::<T>(engine, "ca_block_dots_staged", config)?)
            } else {
                None
            },
            finish: solver_kernel::<T>(engine, "ca_block_finish", config)?,
            update: solver_kernel::<T>(engine, "ca_block_update", config)?,
            cholqr: solver_kernel::<T>(engine, "ca_cholqr", config)?,
            caqr,
            a: gpu_a,
            precond,
            factored,
            unused_vin: engine.storage_zeroed::<T>("cagmres vin (unused)", 1)?,
            pool,
            partials,
            cyc: engine.storage_zeroed::<T>("cagmres cycle buffer", lay.len)?,
            bind_groups: RefCell::new(HashMap::new()),
            batch: RefCell::new(None),
            warming: std::cell::Cell::new(false),
            unsubmitted: std::cell::Cell::new(0),
            staged_dots: std::cell::Cell::new(true),
        };
        sys.pool.write(engine, sys.b(), 0, b);
        if let Some(x0) = x0 {
            sys.pool.write(engine, sys.x(), 0, x0);
        }
        Ok(sys)
    }

    fn params(&self) -> Params {
        Params {
            n: self.n as u32,
            groups: self.g,
            ..Default::default()
        }
    }

    /// Records `kernel` with parameters `p` over `groups` workgroups (bind group cached).
    fn record(&self, which: Which, p: Params, groups: u32) {
        let key = (which, bytemuck::cast::<Params, [u32; 12]>(p));
        let kernel = match which {
            Which::Powers => &self.powers,
            Which::Dots => &self.dots,
            Which::DotsPairs => self.dots_pairs.as_ref().expect("pairs dots compiled"),
            Which::DotsStaged => self.dots_staged.as_ref().expect("staged dots compiled"),
            Which::Finish => &self.finish,
            Which::Update => &self.update,
            Which::Leaf => &self.caqr.as_ref().expect("CAQR kernels compiled").0,
            Which::Apply => &self.caqr.as_ref().expect("CAQR kernels compiled").1,
            Which::Cholqr => &self.cholqr,
        };
        let mut cache = self.bind_groups.borrow_mut();
        let bg = cache.entry(key).or_insert_with(|| {
            let params = self.engine.uniform_from("cagmres params", &p);
            let mut e = vec![
                (1, &self.partials),
                (2, &self.cyc),
                (4, &params),
                (11, self.precond.dinv()),
            ];
            e.extend(self.pool.entries());
            if which == Which::Powers {
                let a = self
                    .a
                    .as_ref()
                    .expect("ca_powers runs where A is on the device");
                e.extend(a.bindings(false));
                let vin = self
                    .factored
                    .as_ref()
                    .map_or(&self.unused_vin, |f| &f.output);
                e.push((6, vin));
            }
            self.engine.bind_group_at(kernel, &e)
        });
        if self.warming.get() {
            return;
        }
        let mut batch = self.batch.borrow_mut();
        let batch = batch.get_or_insert_with(|| self.engine.begin("cagmres"));
        batch.dispatch(kernel, bg, groups);
        self.unsubmitted.set(self.unsubmitted.get() + 1);
    }

    /// Makes (without recording) the bind groups a full cycle needs, so that the loop's
    /// uploads are only its coefficients.
    pub(crate) fn warm_up(&self, arnoldi: bool, tsqr: crate::base::Tsqr) {
        self.warming.set(true);
        let (m, s) = (self.m, self.s);
        let mut starts: Vec<(usize, usize)> = (0..m / s).map(|b| (b * s, s)).collect();
        if arnoldi {
            starts.extend((0..m).map(|j| (j, 1)));
        }
        for (j, steps) in starts {
            for k in 0..steps {
                self.record_powers(j + k, j + k + 1, powers_prev(j, k), k);
            }
            let t = if steps == 1 {
                crate::base::Tsqr::Cgs2
            } else {
                tsqr
            };
            let at = self.lay.eager();
            for pass in 0..2 {
                self.record_projection(j, steps, pass, at);
            }
            self.record_tsqr_launches(j + 1, steps, t, at);
            if super::defers(t) {
                self.record_deferred_block(j, steps, t);
            }
        }
        self.record_residual();
        self.record_update_x(m);
        self.warming.set(false);
    }

    /// pool[dst] = c_A·A·pool[src] + c_s·pool[src] + c_p·pool[prev] with the coefficients
    /// of powers step `k` (`lay.pow + 3k`).
    ///
    /// Right preconditioning: Jacobi is fused (`Params.jacobi`); a factored M is applied to
    /// pool[src] first (copy out, its triangular solves) and the SpMV reads the result.
    pub(crate) fn record_powers(&self, src: usize, dst: usize, prev: usize, k: usize) {
        let flags = if self.factored.is_some() {
            self.record_apply(src);
            VIN
        } else {
            0
        };
        let p = Params {
            num: src as u32,
            den: prev as u32,
            dst: dst as u32,
            comp: (self.lay.pow + 3 * k) as u32,
            jacobi: self.jacobi() as u32,
            flags,
            ..self.params()
        };
        self.record(Which::Powers, p, self.g);
    }

    /// output = M⁻¹·pool[src] for a factored M (two recorded launches' worth of copies and
    /// the apply's triangular solves; nothing without one).
    fn record_apply(&self, src: usize) {
        if self.warming.get() {
            return;
        }
        if let Some(f) = &self.factored {
            let bytes = (self.n * std::mem::size_of::<T>()) as u64;
            let mut batch = self.batch.borrow_mut();
            let batch = batch.get_or_insert_with(|| self.engine.begin("cagmres"));
            let (buf, at) = self.pool.locate(src);
            batch.copy(
                buf,
                (at * std::mem::size_of::<T>()) as u64,
                &f.input,
                0,
                bytes,
            );
            f.step.record(batch);
        }
    }

    /// x += M⁻¹ Q[:, :k] y with y at `lay.y`: one `ca_block_update` (D⁻¹ fused for Jacobi);
    /// with a factored M, u = Q y into the scratch vector, u = M⁻¹u, x += u.
    pub(crate) fn record_update_x(&self, k: usize) {
        let (lay, x, z) = (self.lay, self.x(), self.z());
        match &self.factored {
            None => {
                let dinv = if self.jacobi() { DINV } else { 0 };
                self.record_update(0, k, x, 1, lay.y, 0, T_IDENTITY | C_ADD | dinv);
            }
            Some(f) => {
                self.record_update(0, k, z, 1, lay.y, 0, STORE | C_ADD);
                self.record_apply(z);
                let bytes = (self.n * std::mem::size_of::<T>()) as u64;
                if !self.warming.get() {
                    let mut batch = self.batch.borrow_mut();
                    let batch = batch.get_or_insert_with(|| self.engine.begin("cagmres"));
                    let (buf, at) = self.pool.locate(z);
                    let offset = (at * std::mem::size_of::<T>()) as u64;
                    batch.copy(&f.output, 0, buf, offset, bytes);
                }
                // x += 1·z: the constant 1 is the restart's third coefficient (index 3).
                self.record_update(z, 1, x, 1, 3, 0, T_IDENTITY | C_ADD);
            }
        }
    }

    /// r = b − A·x into pool vector 0 and ‖r‖² into `lay.rr` (the coefficients (−1, 0, 1)
    /// sit at indices 1 … 3 of the cycle buffer, written at set-up).
    pub(crate) fn record_residual(&self) {
        let p = Params {
            num: self.x() as u32,
            den: self.b() as u32,
            dst: 0,
            comp: 1,
            ..self.params()
        };
        self.record(Which::Powers, p, self.g);
        self.record_dots(0, 1, 0, 1, self.lay.rr, None);
    }

    /// D = pool[x0 .. x0+nx)ᵀ pool[y0 .. y0+ny) into the cycle buffer at `dst` (column-major,
    /// leading dimension nx), and stored (`Some((acc, ACC_STORE))`) or added (`ACC_ADD`) at
    /// `acc`: one `ca_block_dots` and one `ca_block_finish` launch, one global reduction.
    pub(crate) fn record_dots(
        &self,
        x0: usize,
        nx: usize,
        y0: usize,
        ny: usize,
        dst: usize,
        acc: Option<(usize, u32)>,
    ) {
        // ca_block_dots: tiles of 4 × 4 products, a workgroup per (tile, row chunk);
        // ca_block_dots_staged: a workgroup per row chunk, all tiles; ca_block_finish: one
        // workgroup per 4 × 1.
        let tiles = (nx.div_ceil(4) * ny.div_ceil(4)) as u32;
        let finish_groups = (nx.div_ceil(4) * ny) as u32;
        let p = Params {
            num: x0 as u32,
            den: nx as u32,
            dst: y0 as u32,
            comp: ny as u32,
            slot: 0,
            ..self.params()
        };
        // Long row loops (eight rows or more per thread of a tile): the pairs kernel, whose
        // tiles share the rows through the cache well enough there; below, the staged
        // kernel where its stage holds the block. H100, 600 iterations of CA-GMRES(10, 30)
        // and (15, 30) (BENCHMARKS.md, 2026-12-07): staged 16–19 % faster per iteration at
        // 1e5, 2–7 % at 1e6, 21–25 % slower at 1e7 (its chunks' loads and barriers do not
        // overlap enough when each workgroup walks ~300 of them).
        let wg = self.engine.tuning().workgroup_size;
        if self.dots_in_pairs() {
            self.record(Which::DotsPairs, p, tiles * self.g);
        } else if self.dots_staged.is_some()
            && self.staged_dots.get()
            && staged_dots_fit(nx, ny, wg)
        {
            self.record(Which::DotsStaged, p, self.g);
        } else {
            self.record(Which::Dots, p, tiles * self.g);
        }
        let (acc_at, flags) = acc.unwrap_or((0, 0));
        let f = Params {
            slot: 0,
            den: nx as u32,
            comp: ny as u32,
            dst: dst as u32,
            comp_monitor: acc_at as u32,
            flags,
            // CA_ACC_ROWS: the rows of X before Y.
            num: if flags & ACC_ROWS != 0 {
                (y0 - x0) as u32
            } else {
                0
            },
            ..self.params()
        };
        self.record(Which::Finish, f, finish_groups);
    }

    /// Whether the block inner products run as `ca_block_dots_pairs` (two rows per step):
    /// where each thread of a tile has eight rows or more, n ≥ 8·groups·WG. Below that the
    /// one-row `ca_block_dots` is faster (BENCHMARKS.md, 2026-11-28).
    pub(crate) fn dots_in_pairs(&self) -> bool {
        dots_in_pairs(self.n, self.g, self.engine.tuning().workgroup_size)
    }

    /// Y ← Y·T ∓ X·C on pool ranges (see `ca_block_update`): X = [x0, x0+nx), Y = [y0,
    /// y0+ny), C at `c`, T at `t`, `flags`.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn record_update(
        &self,
        x0: usize,
        nx: usize,
        y0: usize,
        ny: usize,
        c: usize,
        t: usize,
        flags: u32,
    ) {
        // Four rows per thread: ⌈n/(4·WG)⌉ workgroups (`groups` is their count, the row
        // stride); see the kernel's comment. At most one grid dimension's worth (n ≳ 6.7e7
        // with 256 threads), more rows per thread beyond it: a 2D grid would round the count
        // up to a multiple of its rows.
        let rows = 4 * self.engine.tuning().workgroup_size as usize;
        let groups = (self.n.div_ceil(rows) as u32).min(self.engine.groups_per_dimension());
        let p = Params {
            num: x0 as u32,
            den: nx as u32,
            dst: y0 as u32,
            comp: ny as u32,
            slot: c as u32,
            comp_monitor: t as u32,
            flags,
            groups,
            ..self.params()
        };
        self.record(Which::Update, p, groups);
    }
}

/// ‖G − I‖_F of a k × k Gram matrix `g` (column-major): the orthogonality error ‖I − QᵀQ‖_F
/// the reports give.
/// Whether a system of `n` rows on `groups` workgroups of `wg` threads runs its block inner
/// products as `ca_block_dots_pairs`: eight rows or more per thread of a tile,
/// n ≥ 8·groups·wg.
fn dots_in_pairs(n: usize, groups: u32, wg: u32) -> bool {
    n >= 8 * groups as usize * wg as usize
}

pub(crate) fn distance_from_identity(g: &[f64], k: usize) -> f64 {
    let mut sum = 0.0;
    for i in 0..k {
        for j in 0..k {
            let e = g[i + k * j] - if i == j { 1.0 } else { 0.0 };
            sum += e * e;
        }
    }
    sum.sqrt()
}
