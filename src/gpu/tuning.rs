//! [`Tuning`]: the launch configuration knobs of the solver kernels (workgroup size, the
//! reducing kernels' workgroups, subgroups, timestamps, bounds checks, binding and grid
//! limits forced down for tests), read from `KRYLOV_*` variables for experiments.

/// Launch configuration knobs of the solver kernels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// Threads per workgroup (a power of two, ≤ the adapter's limit).
    pub workgroup_size: u32,
    /// Upper bound on the workgroups of a reducing kernel (= partial sums per inner product);
    /// larger vectors are covered by grid-stride loops.
    pub max_groups: u32,
    /// Reduce with subgroup operations: `None` uses them when the adapter has them.
    pub subgroups: Option<bool>,
    /// Time every dispatch with GPU timestamps (when the device has TIMESTAMP_QUERY inside
    /// passes). Reading the timestamps back costs one extra, uncounted map per submit.
    pub profile: bool,
    /// Compile kernels without naga's runtime bounds checks. Sound for this crate's kernels:
    /// every index is bounded by a `params.n` guard or by CSR arrays that `Csr::new`
    /// validated on the host (row pointers monotone and ≤ nnz, column indices < ncols).
    pub unchecked: bool,
    /// The exact product of double-single kernels (`two_prod` in `shaders/lib/ds.wgsl`):
    /// `None` probes whether the adapter's `fma` is exact (see `gpu::ds`), `Some` forces one.
    pub two_prod: Option<crate::base::scalar::TwoProd>,
    /// Treat storage bindings as at most this many bytes (below the adapter's limit): arrays
    /// larger than it are split over several bindings as they would be over the real limit
    /// (tests force the split on small matrices with it).
    pub max_binding_bytes: Option<u64>,
    /// Wait for a read-back by polling the device in a loop for up to `SPIN_WAIT_LIMIT`
    /// before blocking in the driver's fence wait: the thread spins, and learns of the GPU's
    /// completion sooner than a blocking wait wakes it (on two H200s the distributed CG's
    /// iteration at n = 5e7 took 4–7 % less, BENCHMARKS.md). `None`: spin on hardware
    /// adapters, not on software ones (lavapipe's GPU is the host's cores a spinning thread
    /// would take).
    pub spin_wait: Option<bool>,
    /// Treat the adapter's workgroups per grid dimension (65535 typically) as at most this
    /// many: launches above it go out as 2D grids, as they would beyond the real limit at
    /// n ≳ 1.7e7 (tests force the 2D grids and the grid-stride loops that avoid them on small
    /// problems with it).
    pub max_groups_per_dimension: Option<u32>,
    /// Upper bound on the workgroups a fused solver kernel takes for the row chunks of its
    /// operator where they outnumber [`Engine::reduction_groups`](super::Engine::reduction_groups) (BCSR on a small matrix,
    /// [`Engine::fused_groups`](super::Engine::fused_groups)), at most `max_groups`. 512: every workgroup of a fused
    /// kernel first sums all partials of the kernel before it, so G workgroups read G²
    /// partials; with 512 rather than 1024 BCSR's pipelined CG and BiCGStab took 10–30 %
    /// less per iteration at 1.6e4–6.4e4 rows on the H200, the same above (BENCHMARKS.md,
    /// 2026-11-29, `bench/gpu/chunk_groups.sh`).
    pub max_chunk_groups: u32,
    /// Launch cooperative CG's kernel with this many workgroups without probing how many are
    /// resident at once (a power of two; tests force a grid barrier that cannot hold with
    /// it, to see the fallback). `None`: probe ([`Engine::resident_groups`](super::Engine::resident_groups)).
    pub cooperative_groups: Option<u32>,
    /// Polls of the arrival counter before a cooperative launch's wait at a grid barrier
    /// gives up (tests make a barrier give up with 1). `None`: about a second's worth.
    pub cooperative_spin_limit: Option<u32>,
}

impl Tuning {
    /// The defaults, overridden by `KRYLOV_WORKGROUP_SIZE`, `KRYLOV_MAX_GROUPS`,
    /// `KRYLOV_MAX_CHUNK_GROUPS`,
    /// `KRYLOV_SUBGROUPS` (on/off), `KRYLOV_PROFILE=1`, `KRYLOV_UNCHECKED=1`, `KRYLOV_SPIN_WAIT` (1/0),
    /// `KRYLOV_TWO_PROD` (fma/split) and `KRYLOV_MAX_BINDING_BYTES` when set (for experiments;
    /// invalid values are ignored).
    pub fn from_env() -> Self {
        let var = |k: &str| std::env::var(k).ok();
        let mut t = Tuning::default();
        if let Some(w) = var("KRYLOV_WORKGROUP_SIZE").and_then(|v| v.parse::<u32>().ok())
            && w.is_power_of_two()
            && (32..=1024).contains(&w)
        {
            t.workgroup_size = w;
        }
        if let Some(g) = var("KRYLOV_MAX_GROUPS").and_then(|v| v.parse::<u32>().ok())
            && g > 0
        {
            t.max_groups = g;
        }
        if let Some(g) = var("KRYLOV_MAX_CHUNK_GROUPS").and_then(|v| v.parse::<u32>().ok())
            && g > 0
        {
            t.max_chunk_groups = g;
        }
        match var("KRYLOV_SUBGROUPS").as_deref() {
            Some("on") => t.subgroups = Some(true),
            Some("off") => t.subgroups = Some(false),
            _ => {}
        }
        t.profile = var("KRYLOV_PROFILE").is_some_and(|v| v == "1");
        t.unchecked = var("KRYLOV_UNCHECKED").is_some_and(|v| v == "1");
        match var("KRYLOV_SPIN_WAIT").as_deref() {
            Some("1") => t.spin_wait = Some(true),
            Some("0") => t.spin_wait = Some(false),
            _ => {}
        }
        t.max_binding_bytes = var("KRYLOV_MAX_BINDING_BYTES")
            .and_then(|v| v.parse::<u64>().ok())
            .filter(|b| *b >= 16);
        super::ds::two_prod_from_env(&mut t);
        t
    }
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            workgroup_size: 256,
            max_groups: 1024,
            subgroups: None,
            profile: false,
            unchecked: false,
            two_prod: None,
            max_binding_bytes: None,
            spin_wait: None,
            max_groups_per_dimension: None,
            max_chunk_groups: 512,
            cooperative_groups: None,
            cooperative_spin_limit: None,
        }
    }
}

/// How long [`PendingRead::wait`](super::PendingRead::wait) polls before it blocks, when it
/// spins ([`Tuning::spin_wait`]): longer than a distributed iteration's waits at the sizes
/// where they matter, short enough that a long solve's final wait sleeps.
pub const SPIN_WAIT_LIMIT: std::time::Duration = std::time::Duration::from_millis(20);
