//! A pool of n-vectors on the GPU over one or two storage bindings ([`PoolBuffers`]): the
//! Krylov bases and work vectors of GMRES and CA-GMRES, whose kernels read and write it
//! through `shaders/lib/gmres_pool.wgsl` (`pool_get`, `pool_set`).

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::Engine;

/// A pool of vectors on the GPU (GMRES's, CA-GMRES's): one buffer, or two when it exceeds one
/// storage binding (issue #16: no size refused) — vectors 0 … `split` − 1 in `low`, the rest in `high`, split at a vector
/// so every copy and readback of a vector stays in one buffer. The kernels address it through
/// `shaders/lib/gmres_pool.wgsl` (`pool` at binding 5, `pool_split` at 17, `pool_hi` at 18:
/// [`Self::entries`]).
pub(crate) struct PoolBuffers {
    low: wgpu::Buffer,
    high: wgpu::Buffer,
    /// Vectors in `low` (all of them with one binding).
    split: usize,
    /// Whether `high` holds any vector.
    two: bool,
    /// `vec4<u32>` with the first element of `high` (u32::MAX with one binding).
    split_uniform: wgpu::Buffer,
    n: usize,
}

impl PoolBuffers {
    /// `vectors` vectors of `n` entries of `T`, over two buffers when one binding
    /// ([`Engine::binding_limit`]) cannot hold them; an error when two cannot either.
    pub(crate) fn new<T: Scalar>(
        engine: &Engine,
        what: &str,
        vectors: usize,
        n: usize,
    ) -> Result<Self> {
        let elem = std::mem::size_of::<T>() as u64;
        let limit = engine.binding_limit();
        let per = ((limit / (n as u64 * elem).max(1)) as usize).max(1);
        let (split, high_vectors) = if vectors <= per {
            (vectors, 0)
        } else {
            (per, vectors - per)
        };
        if high_vectors > per || (split * n) as u64 >= u32::MAX as u64 {
            return Err(crate::base::error::KrylovError::BufferTooLarge {
                what: format!("{what} (over two bindings)"),
                bytes: vectors as u64 * n as u64 * elem,
                limit: 2 * per as u64 * n as u64 * elem,
                limit_name: "two storage bindings",
            });
        }
        let first_high = if high_vectors > 0 {
            (split * n) as u32
        } else {
            u32::MAX
        };
        Ok(PoolBuffers {
            low: engine.storage_zeroed::<T>(what, split * n)?,
            high: engine
                .storage_zeroed::<T>(&format!("{what} (second binding)"), high_vectors * n)?,
            split,
            two: high_vectors > 0,
            split_uniform: engine.uniform_from("pool split", &[first_high, 0, 0, 0]),
            n,
        })
    }

    /// The buffer holding pool vector `k` and the vector's offset in it, in elements.
    pub(crate) fn locate(&self, k: usize) -> (&wgpu::Buffer, usize) {
        if k < self.split {
            (&self.low, k * self.n)
        } else {
            (&self.high, (k - self.split) * self.n)
        }
    }

    /// Whether the pool is over two bindings.
    pub(crate) fn is_split(&self) -> bool {
        self.two
    }
    /// The buffer of vectors `0 .. split` (binding 5).
    pub(crate) fn low(&self) -> &wgpu::Buffer {
        &self.low
    }

    /// The second buffer (binding 18; a stub with one binding).
    pub(crate) fn high(&self) -> &wgpu::Buffer {
        &self.high
    }

    /// The first element of the second buffer as a `vec4<u32>` uniform (binding 17).
    pub(crate) fn split_uniform(&self) -> &wgpu::Buffer {
        &self.split_uniform
    }

    /// The bind-group entries of `shaders/lib/gmres_pool.wgsl` (either variant).
    pub(crate) fn entries(&self) -> [(u32, &wgpu::Buffer); 3] {
        [(5, &self.low), (17, &self.split_uniform), (18, &self.high)]
    }

    /// Writes `data` into pool vector `k` from its entry `at` (one counted upload).
    pub(crate) fn write<T: bytemuck::Pod>(&self, engine: &Engine, k: usize, at: usize, data: &[T]) {
        let (buf, off) = self.locate(k);
        engine.write(buf, off + at, data);
    }
}
