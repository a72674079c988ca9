//! A pool of n-vectors on the GPU over one or several storage bindings ([`PoolBuffers`]): the
//! Krylov bases and work vectors of GMRES and CA-GMRES, whose kernels read and write it
//! through `shaders/lib/gmres_pool.wgsl` (`pool_get`, `pool_set`) or, over several bindings,
//! the same interface from [`pool_source`](crate::gpu::shader::pool_source); a distributed
//! block's kernels through `shaders/lib/dist_pool.wgsl` ([`PoolLayout::Dist`]).

use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::gpu::Engine;
use crate::gpu::shader::{MAX_POOL_PARTS, PoolLayout};

/// Storage buffers a GMRES or CA-GMRES kernel binds besides its pool (state, partials, cycle
/// buffer, D⁻¹, and a matrix of up to five arrays, with room to spare): the pool gets at most
/// the adapter's per-stage limit minus these.
const OTHER_STORAGE_BUFFERS: u32 = 12;

/// A pool of vectors on the GPU (GMRES's, CA-GMRES's): one buffer, or several when it exceeds
/// one storage binding (issue #16: no size refused). Parts are split at whole vectors — every
/// part but the last holds as many vectors as one binding takes — so every copy and read-back
/// of a vector stays in one buffer. The kernels address it through
/// `shaders/lib/gmres_pool.wgsl` (part 0 at binding 5) or its several-binding variant (part k
/// at [`PoolLayout::part`], the parts' first elements in a uniform at 17): [`Self::entries`];
/// a distributed block's at [`PoolLayout::Dist`]'s bindings: [`Self::entries_at`].
pub(crate) struct PoolBuffers {
    parts: Vec<wgpu::Buffer>,
    /// Vectors per part (all but the last part hold exactly this many).
    per: usize,
    /// `array<vec4<u32>, 2>`: entry k the first element of part k + 1 (u32::MAX past the last).
    bounds: wgpu::Buffer,
    n: usize,
}

impl PoolBuffers {
    /// `vectors` vectors of `n` entries of `T`, over as many buffers as one binding each
    /// ([`Engine::binding_limit`]) needs; an error when more than the kernels can bind
    /// ([`MAX_POOL_PARTS`], or fewer on an adapter with few storage buffers per stage) or when
    /// the pool's element indices exceed `u32`.
    pub(crate) fn new<T: Scalar>(
        engine: &Engine,
        what: &str,
        vectors: usize,
        n: usize,
    ) -> Result<Self> {
        Self::filled(engine, what, vectors, n, T::zero())
    }

    /// [`Self::new`] with every entry NaN (a distributed block's basis: a kernel reading an
    /// entry no kernel wrote shows in the results).
    pub(crate) fn poisoned<T: Scalar>(
        engine: &Engine,
        what: &str,
        vectors: usize,
        n: usize,
    ) -> Result<Self> {
        Self::filled(engine, what, vectors, n, T::from_f64(f64::NAN))
    }

    fn filled<T: Scalar>(
        engine: &Engine,
        what: &str,
        vectors: usize,
        n: usize,
        fill: T,
    ) -> Result<Self> {
        let elem = std::mem::size_of::<T>() as u64;
        let bytes = vectors as u64 * n as u64 * elem;
        let limit = engine.binding_limit();
        let per = ((limit / (n as u64 * elem).max(1)) as usize).max(1);
        let parts = vectors.div_ceil(per).max(1);
        let stage = engine.context().limits.max_storage_buffers_per_shader_stage;
        let most = (MAX_POOL_PARTS as u32).min(stage.saturating_sub(OTHER_STORAGE_BUFFERS).max(1));
        if parts > most as usize {
            return Err(KrylovError::BufferTooLarge {
                what: format!("{what} (over {most} bindings)"),
                bytes,
                limit: most as u64 * per as u64 * n as u64 * elem,
                limit_name: "the storage bindings a kernel can hold",
            });
        }
        if vectors as u64 * n as u64 > u32::MAX as u64 {
            return Err(KrylovError::BufferTooLarge {
                what: format!("{what} (indexed by 32-bit element numbers)"),
                bytes,
                limit: u32::MAX as u64 * elem,
                limit_name: "32-bit element indices",
            });
        }
        let mut bounds = [u32::MAX; 8];
        let mut buffers = Vec::with_capacity(parts);
        for k in 0..parts {
            let count = per.min(vectors - k * per);
            let label = if k == 0 {
                what.to_string()
            } else {
                format!("{what} (binding {} of {parts})", k + 1)
            };
            buffers.push(if fill == T::zero() {
                engine.storage_zeroed::<T>(&label, count * n)?
            } else {
                engine.storage_from(&label, &vec![fill; (count * n).max(1)])?
            });
            // Beyond eight parts the kernels divide by entry 0 (`pool_source`).
            if k > 0 && k <= bounds.len() {
                bounds[k - 1] = (k * per * n) as u32;
            }
        }
        Ok(PoolBuffers {
            parts: buffers,
            per,
            bounds: engine.uniform_from("pool bounds", &bounds),
            n,
        })
    }

    /// The buffer holding pool vector `k` and the vector's offset in it, in elements.
    pub(crate) fn locate(&self, k: usize) -> (&wgpu::Buffer, usize) {
        let p = (k / self.per).min(self.parts.len() - 1);
        (&self.parts[p], (k - p * self.per) * self.n)
    }

    /// The storage bindings the pool spreads over ([`crate::gpu::ShaderConfig::pool_parts`]).
    pub(crate) fn parts(&self) -> u8 {
        self.parts.len() as u8
    }

    /// Whether the pool is over more than one binding.
    pub(crate) fn is_split(&self) -> bool {
        self.parts.len() > 1
    }

    /// The buffer of part 0: vectors `0 ..` (all of them with one binding).
    pub(crate) fn low(&self) -> &wgpu::Buffer {
        &self.parts[0]
    }

    /// The bind-group entries of the GMRES and CA-GMRES kernels' pool (either variant).
    pub(crate) fn entries(&self) -> Vec<(u32, &wgpu::Buffer)> {
        self.entries_at(PoolLayout::Solver)
    }

    /// The bind-group entries of a pool at `layout`'s bindings.
    pub(crate) fn entries_at(&self, layout: PoolLayout) -> Vec<(u32, &wgpu::Buffer)> {
        let mut e = vec![
            (layout.first(), &self.parts[0]),
            (layout.bounds(), &self.bounds),
        ];
        for (k, b) in self.parts.iter().enumerate().skip(1) {
            e.push((layout.part(k as u8), b));
        }
        e
    }

    /// Writes `data` into pool vector `k` from its entry `at` (one counted upload).
    pub(crate) fn write<T: bytemuck::Pod>(&self, engine: &Engine, k: usize, at: usize, data: &[T]) {
        let (buf, off) = self.locate(k);
        engine.write(buf, off + at, data);
    }
}
