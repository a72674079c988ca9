//! The matrix powers kernel on several devices (paper 002 §IV-A, Fig. 4): the s products of
//! a CA-GMRES block from ONE exchange instead of s. Each part receives, with the block's
//! start vector, the entries of every row within s edges of its own (its *deep halo*: the
//! ghost rows of levels 1 … s, level = distance in A's graph from the owned rows) and holds
//! the rows of A of levels 1 … s−1 beside its own (the paper's boundary submatrix
//! A(δ(d,1:s−1), :)). Step k then computes v_k on the owned rows and the ghost rows of levels
//! ≤ s − k — each needs v_{k−1} one level further out, which the step before computed — so
//! the last step lands on the owned rows alone, with no exchange in between. The price is the
//! ghost rows' extra products and the larger halo (the surface-to-volume ratio of paper 002
//! Fig. 6), small against the owned rows for the banded and mesh matrices CA-GMRES is for.
//!
//! [`DeepHalo::plan`] finds the levels and the exchange (every part's, as every process of an
//! MPI run needs them), [`ExtBlock::build`] one part's extended rows. Positions in a part's
//! extended vector: its owned rows in local order (`LocalPart::order`), then its ghost rows
//! ascending by global index, so that the exchange writes each owner's slice contiguously;
//! the extended matrix's rows are ordered by level instead (owned, level 1, …), so the rows of
//! step k are a prefix, and each row says which position it writes (`target`).
//! [`ExtBlock::powers`] is the CPU twin of `shaders/dist/dist_ca_mpk_step.wgsl`.

use rayon::prelude::*;

use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::gpu::kernels::solver_kernel;
use crate::gpu::{Batch, Engine, Kernel};
use crate::matrix::Csr;
use crate::matrix::partition::{Exchange, RowPartition, local_index};
use crate::solvers::pool::PoolBuffers;

/// Every part's ghost rows for a matrix powers depth, and the exchange that fills them.
#[derive(Debug, Clone)]
pub(crate) struct DeepHalo {
    pub depth: usize,
    /// Per part: ghost rows (global, ascending).
    pub ghosts: Vec<Vec<u32>>,
    /// Per part: each ghost row's level (1 ..= depth), parallel to `ghosts`.
    pub levels: Vec<Vec<u32>>,
    pub exchange: Exchange,
}

impl DeepHalo {
    /// The ghost rows of every part within `depth` edges of its rows (`orders[p]`: part p's
    /// rows in local order, interior rows `0..interiors[p]` first, each half ascending), and
    /// the exchange of a vector's entries there.
    pub fn plan<T: Scalar>(
        a: &Csr<T>,
        partition: &RowPartition,
        orders: &[Vec<u32>],
        interiors: &[usize],
        depth: usize,
    ) -> Self {
        let (rp, ci) = (a.row_ptr(), a.col_idx());
        let cols = |g: u32| &ci[rp[g as usize] as usize..rp[g as usize + 1] as usize];
        let found: Vec<(Vec<u32>, Vec<u32>)> = (0..partition.parts())
            .into_par_iter()
            .map(|p| {
                let own = partition.rows(p);
                let mine = |c: u32| own.contains(&(c as usize));
                let mut level: std::collections::HashMap<u32, u32> = Default::default();
                // Only boundary rows reach outside the part.
                let mut frontier: Vec<u32> = orders[p][interiors[p]..].to_vec();
                for l in 1..=depth as u32 {
                    let mut next = Vec::new();
                    for &g in &frontier {
                        for &c in cols(g) {
                            if !mine(c) && !level.contains_key(&c) {
                                level.insert(c, l);
                                next.push(c);
                            }
                        }
                    }
                    frontier = next;
                }
                let mut ghosts: Vec<u32> = level.keys().copied().collect();
                ghosts.sort_unstable();
                let levels = ghosts.iter().map(|g| level[g]).collect();
                (ghosts, levels)
            })
            .collect();
        let (ghosts, levels): (Vec<Vec<u32>>, Vec<Vec<u32>>) = found.into_iter().unzip();
        let halos: Vec<&[u32]> = ghosts.iter().map(Vec::as_slice).collect();
        let exchange = Exchange::for_halos(partition, &halos, |o, g| {
            local_index(&orders[o], interiors[o], g)
        });
        DeepHalo {
            depth,
            ghosts,
            levels,
            exchange,
        }
    }
}

/// One part's rows for the matrix powers: its own and its ghost rows of levels
/// 1 ..= depth − 1, in extended positions (see the module docs).
#[derive(Debug, Clone)]
pub(crate) struct ExtBlock<T> {
    pub nloc: usize,
    /// Owned rows + ghost rows: the extended vector's length.
    pub next: usize,
    pub row_ptr: Vec<u32>,
    pub col_idx: Vec<u32>,
    pub values: Vec<T>,
    /// The extended position each row writes.
    pub target: Vec<u32>,
    /// `rows_at[l]`: the owned rows and the ghost rows of levels ≤ l (l < depth), a prefix of
    /// the rows: what step k computes with l = depth − k.
    pub rows_at: Vec<usize>,
}

impl<T: Scalar> ExtBlock<T> {
    /// Part `p`'s extended rows (`order`: its rows in local order).
    pub fn build(
        a: &Csr<T>,
        partition: &RowPartition,
        p: usize,
        order: &[u32],
        halo: &DeepHalo,
    ) -> Self {
        let own = partition.rows(p);
        let nloc = own.len();
        let (ghosts, levels) = (&halo.ghosts[p], &halo.levels[p]);
        let mut local = vec![0u32; nloc];
        for (i, &g) in order.iter().enumerate() {
            local[g as usize - own.start] = i as u32;
        }
        let position = |c: u32| -> u32 {
            if own.contains(&(c as usize)) {
                local[c as usize - own.start]
            } else {
                (nloc
                    + ghosts
                        .binary_search(&c)
                        .expect("a row within depth reads its ghosts")) as u32
            }
        };
        // Rows: owned (local order), then ghosts by level (ascending within one).
        let mut rows: Vec<(u32, u32)> = order
            .iter()
            .enumerate()
            .map(|(i, &g)| (g, i as u32))
            .collect();
        let mut rows_at = vec![nloc];
        for l in 1..halo.depth as u32 {
            rows.extend(
                ghosts
                    .iter()
                    .zip(levels)
                    .enumerate()
                    .filter(|(_, (_, lv))| **lv == l)
                    .map(|(h, (&g, _))| (g, (nloc + h) as u32)),
            );
            rows_at.push(rows.len());
        }
        let (rp, ci, va) = (a.row_ptr(), a.col_idx(), a.values());
        let mut row_ptr = Vec::with_capacity(rows.len() + 1);
        row_ptr.push(0u32);
        let (mut col_idx, mut values) = (Vec::new(), Vec::new());
        let mut target = Vec::with_capacity(rows.len());
        for &(g, t) in &rows {
            // A's column order: every row sums as one device does.
            let span = rp[g as usize] as usize..rp[g as usize + 1] as usize;
            col_idx.extend(ci[span.clone()].iter().map(|&c| position(c)));
            values.extend_from_slice(&va[span]);
            row_ptr.push(col_idx.len() as u32);
            target.push(t);
        }
        ExtBlock {
            nloc,
            next: nloc + ghosts.len(),
            row_ptr,
            col_idx,
            values,
            target,
            rows_at,
        }
    }

    /// The depth the block was built for.
    pub fn depth(&self) -> usize {
        self.rows_at.len()
    }

    /// CPU twin of `dist_ca_mpk_step` over `steps` ≤ depth steps: from the extended start
    /// vector `z0` (owned entries, then the ghosts the exchange filled), the owned rows of
    /// v₁ … v_steps, with (c_A, c_s, c_p) = `coef[3(k−1) ..]` and the product reading
    /// D⁻¹z where `dinv` (extended) is given: v_k = c_A·A·D⁻¹v_{k−1} + c_s·v_{k−1} + c_p·v_{k−2}.
    #[cfg(test)]
    pub fn powers(
        &self,
        z0: &[f64],
        steps: usize,
        coef: &[f64],
        dinv: Option<&[f64]>,
    ) -> Vec<Vec<f64>> {
        let mut z = vec![z0.to_vec()];
        for k in 1..=steps {
            let (ca, cs, cp) = (
                coef[3 * (k - 1)],
                coef[3 * (k - 1) + 1],
                coef[3 * (k - 1) + 2],
            );
            let mut next = vec![f64::NAN; self.next];
            let (cur, prev) = (&z[k - 1], &z[k.saturating_sub(2)]);
            for r in 0..self.rows_at[self.depth() - k] {
                let t = self.target[r] as usize;
                let span = self.row_ptr[r] as usize..self.row_ptr[r + 1] as usize;
                let s: f64 = self.col_idx[span.clone()]
                    .iter()
                    .zip(&self.values[span])
                    .map(|(&c, v)| {
                        let d = dinv.map_or(1.0, |d| d[c as usize]);
                        v.as_f64() * d * cur[c as usize]
                    })
                    .sum();
                let mut v = ca * s + cs * cur[t];
                if cp != 0.0 {
                    v += cp * prev[t];
                }
                next[t] = v;
            }
            z.push(next);
        }
        z.into_iter()
            .skip(1)
            .map(|v| v[..self.nloc].to_vec())
            .collect()
    }
}

/// Mirrors `struct Mpk` of `shaders/dist/dist_ca_mpk_load.wgsl` and `dist_ca_mpk_step.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct MpkParams {
    n: u32,
    next: u32,
    src: u32,
    count: u32,
    jacobi: u32,
    pad: [u32; 3],
}

/// Mirrors `struct MpkStep` of `shaders/dist/dist_ca_mpk_step.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct MpkStep {
    k: u32,
    rows: u32,
    pad: [u32; 2],
}

/// Slots of the extended vectors on the device: z_k in slot k mod 3 (a step reads the two
/// vectors before it, `dist_ca_mpk_step`), whatever the depth.
const Z_SLOTS: usize = 3;

/// One device's matrix powers: its [`ExtBlock`] uploaded, the extended vectors (z_k in slot
/// k mod [`Z_SLOTS`]), the deep send list, and the launches (`dist_ca_mpk_load`, then
/// `dist_ca_mpk_step` for k = 1 … depth).
pub(crate) struct MpkDevice {
    pub nloc: usize,
    /// Extended vectors, z_k at (k mod 3)·next (z₀, the block's start and the received
    /// halo, in slot 0).
    pub z: wgpu::Buffer,
    pub send: wgpu::Buffer,
    pub send_len: usize,
    params: wgpu::Buffer,
    coef: wgpu::Buffer,
    /// The coefficients last written to `coef`.
    last_coef: std::cell::RefCell<Option<Vec<f64>>>,
    next: usize,
    jacobi: bool,
    load: (Kernel, wgpu::BindGroup, u32),
    steps: Vec<(Kernel, wgpu::BindGroup, u32)>,
    /// Keeps the bound buffers alive with the bind groups.
    _buffers: Vec<wgpu::Buffer>,
}

impl MpkDevice {
    /// Uploads `ext` (with D⁻¹ on its extended rows for Jacobi) and `send` (owned local
    /// indices other parts' deep halos read) to `engine`, beside `pool` (the device's CA-GMRES
    /// pool). `None` when the extended vectors or rows exceed one storage binding: the caller
    /// then runs the powers one exchange per step.
    pub fn new<T: Scalar>(
        engine: &Engine,
        ext: &ExtBlock<T>,
        dinv: Option<&[T]>,
        send: &[u32],
        pool: &PoolBuffers,
    ) -> Result<Option<Self>> {
        let size = std::mem::size_of::<T>() as u64;
        let depth = ext.depth();
        let limit = engine.binding_limit();
        if Z_SLOTS as u64 * ext.next as u64 * size > limit || ext.values.len() as u64 * size > limit
        {
            return Ok(None);
        }
        let config = crate::gpu::ShaderConfig {
            pool_parts: pool.parts(),
            ..engine.shader_config(T::PRECISION)
        };
        let (k_load, k_step) = (
            solver_kernel::<T>(engine, "dist_ca_mpk_load", config)?,
            solver_kernel::<T>(engine, "dist_ca_mpk_step", config)?,
        );
        let z = engine.storage_from("mpk z", &vec![T::from_f64(f64::NAN); Z_SLOTS * ext.next])?;
        let send_idx = engine.storage_from("mpk send_idx", &nonempty(send))?;
        let send_buf =
            engine.storage_from("mpk send", &vec![T::from_f64(f64::NAN); send.len().max(1)])?;
        let row_ptr = engine.storage_from("mpk row_ptr", &ext.row_ptr)?;
        let cols = engine.storage_from("mpk cols", &nonempty(&ext.col_idx))?;
        let vals = engine.storage_from("mpk vals", &nonempty(&ext.values))?;
        let target = engine.storage_from("mpk target", &nonempty(&ext.target))?;
        let dinv_buf = engine.storage_from(
            "mpk dinv",
            &dinv.map_or_else(|| vec![T::one()], <[T]>::to_vec),
        )?;
        let coef = engine.storage_zeroed::<T>("mpk coef", 3 * depth)?;
        let params = engine.uniform_from("mpk params", &MpkParams::default());
        let mut base = pool.entries_at(crate::gpu::shader::PoolLayout::Dist);
        base.extend([
            (25, &z),
            (26, &send_idx),
            (27, &send_buf),
            (28, &params),
            (29, &row_ptr),
            (30, &cols),
            (31, &vals),
            (32, &target),
            (33, &dinv_buf),
            (34, &coef),
        ]);
        let load_bind = engine.bind_group_at(&k_load, &base);
        let load = (
            k_load,
            load_bind,
            engine.reduction_groups(ext.nloc.max(send.len())),
        );
        let mut steps = Vec::with_capacity(depth);
        let mut uniforms = Vec::with_capacity(depth);
        for k in 1..=depth {
            let rows = ext.rows_at[depth - k];
            let u = engine.uniform_from(
                "mpk step",
                &MpkStep {
                    k: k as u32,
                    rows: rows as u32,
                    pad: [0; 2],
                },
            );
            let mut entries = base.to_vec();
            entries.push((35, &u));
            let bind = engine.bind_group_at(&k_step, &entries);
            steps.push((k_step.clone(), bind, engine.reduction_groups(rows)));
            uniforms.push(u);
        }
        let mut keep = vec![send_idx, row_ptr, cols, vals, target, dinv_buf];
        keep.extend(uniforms);
        Ok(Some(MpkDevice {
            nloc: ext.nloc,
            z,
            send: send_buf,
            send_len: send.len(),
            params,
            coef,
            last_coef: Default::default(),
            next: ext.next,
            jacobi: dinv.is_some(),
            load,
            steps,
            _buffers: keep,
        }))
    }

    /// Writes a block's start (pool vector `src`) and, where they changed since the last
    /// block (a cycle's blocks share them), its steps' coefficients (`step_coefficients`, 3 per
    /// step).
    pub fn set_block<T: Scalar>(&self, engine: &Engine, src: usize, coef: &[f64]) {
        let p = MpkParams {
            n: self.nloc as u32,
            next: self.next as u32,
            src: src as u32,
            count: self.send_len as u32,
            jacobi: self.jacobi as u32,
            pad: [0; 3],
        };
        engine.write(&self.params, 0, &[p]);
        let mut last = self.last_coef.borrow_mut();
        if last.as_deref() != Some(coef) {
            let c: Vec<T> = coef.iter().map(|&v| T::from_f64(v)).collect();
            engine.write(&self.coef, 0, &c);
            *last = Some(coef.to_vec());
        }
    }

    /// Records the load of the start vector and the gather of the sent entries.
    pub fn record_load(&self, batch: &mut Batch<'_>) {
        batch.dispatch(&self.load.0, &self.load.1, self.load.2);
    }

    /// Records steps 1 ..= `steps`.
    pub fn record_steps(&self, batch: &mut Batch<'_>, steps: usize) {
        for (kernel, bind, groups) in &self.steps[..steps] {
            batch.dispatch(kernel, bind, *groups);
        }
    }
}

/// `v`, or one zero where it is empty (a binding needs a non-empty buffer).
fn nonempty<U: bytemuck::Pod + Default>(v: &[U]) -> Vec<U> {
    if v.is_empty() {
        vec![U::default()]
    } else {
        v.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::generators::{convection_diffusion_2d, laplace_3d};
    use crate::matrix::partition::LocalPart;

    /// The owned rows of `steps` global matrix powers steps against the deep halo's: one
    /// exchange, then every step on the part alone.
    fn check(a: &Csr<f64>, bounds: Vec<usize>, depth: usize) {
        let n = a.nrows();
        let partition = RowPartition::from_bounds(n, bounds).unwrap();
        let k = partition.parts();
        let locals: Vec<LocalPart<f64>> =
            (0..k).map(|p| LocalPart::build(a, &partition, p)).collect();
        let orders: Vec<Vec<u32>> = locals.iter().map(|l| l.order.clone()).collect();
        let interiors: Vec<usize> = locals.iter().map(|l| l.interior).collect();
        let halo = DeepHalo::plan(a, &partition, &orders, &interiors, depth);
        let v: Vec<f64> = (0..n)
            .map(|i| ((i * 37 % 101) as f64 - 50.0) / 25.0)
            .collect();
        let d: Vec<f64> = (0..n).map(|i| 1.0 / (2.0 + (i % 7) as f64)).collect();
        // Newton steps with a complex pair (c_p ≠ 0 from the second step on).
        let coef: Vec<f64> = (0..depth)
            .flat_map(|k| {
                [
                    0.5,
                    -0.3 - 0.1 * k as f64,
                    if k % 2 == 1 { 0.2 } else { 0.0 },
                ]
            })
            .collect();
        let mut want = vec![v.clone()];
        for step in 1..=depth {
            let cur = &want[step - 1];
            let dv: Vec<f64> = cur.iter().zip(&d).map(|(x, d)| x * d).collect();
            let av = a.mul_vec(&dv).unwrap();
            let (ca, cs, cp) = (
                coef[3 * (step - 1)],
                coef[3 * (step - 1) + 1],
                coef[3 * (step - 1) + 2],
            );
            let prev = &want[step.saturating_sub(2)];
            want.push(
                (0..n)
                    .map(|i| ca * av[i] + cs * cur[i] + if cp != 0.0 { cp * prev[i] } else { 0.0 })
                    .collect(),
            );
        }
        // Every owner's sent entries, moved as the exchange says.
        let sent: Vec<Vec<f64>> = (0..k)
            .map(|p| {
                halo.exchange.send[p]
                    .iter()
                    .map(|&i| v[orders[p][i as usize] as usize])
                    .collect()
            })
            .collect();
        for p in 0..k {
            let ext = ExtBlock::build(a, &partition, p, &orders[p], &halo);
            let mut z0 = vec![f64::NAN; ext.next];
            for (i, &g) in orders[p].iter().enumerate() {
                z0[i] = v[g as usize];
            }
            for t in halo.exchange.transfers.iter().filter(|t| t.to == p) {
                z0[ext.nloc + t.dst..ext.nloc + t.dst + t.len]
                    .copy_from_slice(&sent[t.from][t.src..t.src + t.len]);
            }
            let mut dext = vec![0.0; ext.next];
            for (i, &g) in orders[p].iter().enumerate() {
                dext[i] = d[g as usize];
            }
            for (h, &g) in halo.ghosts[p].iter().enumerate() {
                dext[ext.nloc + h] = d[g as usize];
            }
            let got = ext.powers(&z0, depth, &coef, Some(&dext));
            for (step, owned) in got.iter().enumerate() {
                for (i, &g) in orders[p].iter().enumerate() {
                    let (x, y) = (owned[i], want[step + 1][g as usize]);
                    assert!(
                        (x - y).abs() <= 1e-12 * (1.0 + y.abs()),
                        "part {p} step {} row {g}: {x} vs {y}",
                        step + 1
                    );
                }
            }
            // The ghosts are exactly the rows within `depth` edges: level 1 is the one-level halo.
            let level1: Vec<u32> = halo.ghosts[p]
                .iter()
                .zip(&halo.levels[p])
                .filter(|(_, l)| **l == 1)
                .map(|(g, _)| *g)
                .collect();
            assert_eq!(level1, locals[p].halo, "part {p}");
        }
    }

    #[test]
    fn one_exchange_then_local_steps_equal_the_global_powers() {
        let c = convection_diffusion_2d::<f64>(12, 10.0);
        check(&c, vec![0, 40, 41, 100, 144], 4);
        check(&c, vec![0, 72, 144], 1);
        let l = laplace_3d::<f64>(6);
        check(&l, vec![0, 50, 130, 216], 5);
        // Deeper than a part is wide: the ghosts reach past the neighbouring part.
        check(&c, vec![0, 10, 20, 144], 6);
    }
}
