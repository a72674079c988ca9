// dist_basis.wgsl: GMRES's Krylov basis on one device's row block (issue #19; host side
// `src/solvers/dist/gmres.rs`), on lib/dist.wgsl. Basis vector v_k of the block is pool
// element k · gm.n + i (lib/dist_pool.wgsl or dist_pool_read.wgsl: `pool_get`, over several
// bindings where one cannot hold the basis); the kernel declares `w` for `dist_basis_dots`.
// The host writes `gm` and `hcoef` before each phase.

struct DistGm {
    // Rows of the block: the basis stride.
    n: u32,
    // Inner products ⟨v_k, w⟩ for k < count, beside ⟨w, w⟩ (dist_basis_dots); basis vectors
    // v_0 .. v_{count−1} of the update (dist_gmres_update_x).
    count: u32,
    // The basis vector dist_gmres_prepare finalises.
    dest: u32,
    // Basis vectors v_1 .. v_nsub subtracted with the coefficients hcoef[1 ..= nsub].
    nsub: u32,
}

@group(0) @binding(22) var<uniform> gm: DistGm;
// hcoef[0]: a scale (dist_gmres_prepare: 1/R_ii); hcoef[k], k ≥ 1: the coefficient of v_k
// (Gram–Schmidt) or of v_{k−1} (the update of x).
@group(0) @binding(21) var<storage, read> hcoef: array<Real>;

// Σ_{k=1..nsub} hcoef[k] · v_k at rows i and j: the projection classical Gram–Schmidt
// removes, for two rows at once so that both rows' loads of each v_k are in flight before
// their products (one row per call kept one load in flight; each row's sum is added in the
// same order either way).
fn dist_basis_combo2(i: u32, j: u32) -> vec2<Real> {
    var s0 = Real(0.0);
    var s1 = Real(0.0);
    for (var k = 1u; k <= gm.nsub; k = k + 1u) {
        let c = hcoef[k];
        let a = pool_get(k * gm.n + i);
        let b = pool_get(k * gm.n + j);
        s0 = s0 + c * a;
        s1 = s1 + c * b;
    }
    return vec2<Real>(s0, s1);
}

// Value q of a row's inner-product terms: ⟨w, w⟩'s for q = 0, ⟨v_{q−1}, w⟩'s for
// 1 ≤ q ≤ gm.count, 0 beyond.
fn dist_basis_factor(q: u32, i: u32, wi: Real) -> Real {
    if q == 0u {
        return wi;
    }
    if q <= gm.count {
        return pool_get((q - 1u) * gm.n + i);
    }
    return Real(0.0);
}

// The first reduction stage of ⟨w, w⟩ and ⟨v_k, w⟩ (k < gm.count) over rows
// dist.begin..dist.end: value q (0: ⟨w, w⟩, 1 + k: ⟨v_k, w⟩) goes to component q % 4 of slot
// dist.slot + (q / 4) · dist.quad_stride. Reads w[i] at the rows this thread visits (and may
// have written: the same grid-stride walk). Call from uniform control flow.
fn dist_basis_dots(ids: Ids) {
    let stride = ids.nwg.x * WG;
    let quads = (gm.count + 4u) / 4u;
    // Two quads per pass over the rows (w read half as often); each quad's terms are added
    // in the same order as with one quad per pass.
    for (var q = 0u; q < quads; q = q + 2u) {
        let two = q + 1u < quads;
        var acc = vec4<Real>(Real(0.0));
        var acc2 = vec4<Real>(Real(0.0));
        for (var i = dist.begin + ids.wid.x * WG + ids.lid; i < dist.end; i = i + stride) {
            let wi = w[i];
            let f = vec4<Real>(
                dist_basis_factor(4u * q, i, wi),
                dist_basis_factor(4u * q + 1u, i, wi),
                dist_basis_factor(4u * q + 2u, i, wi),
                dist_basis_factor(4u * q + 3u, i, wi),
            );
            acc = acc + f * wi;
            if two {
                let f2 = vec4<Real>(
                    dist_basis_factor(4u * q + 4u, i, wi),
                    dist_basis_factor(4u * q + 5u, i, wi),
                    dist_basis_factor(4u * q + 6u, i, wi),
                    dist_basis_factor(4u * q + 7u, i, wi),
                );
                acc2 = acc2 + f2 * wi;
            }
        }
        let total = workgroup_sum(acc, ids);
        if ids.lid == 0u {
            partials[(dist.slot + q * dist.quad_stride) * dist.groups + ids.wid.x] = total;
        }
        if two {
            let total2 = workgroup_sum(acc2, ids);
            if ids.lid == 0u {
                partials[(dist.slot + (q + 1u) * dist.quad_stride) * dist.groups + ids.wid.x] = total2;
            }
        }
    }
}
