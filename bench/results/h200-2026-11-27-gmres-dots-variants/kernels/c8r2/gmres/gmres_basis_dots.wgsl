// gmres_basis_dots: first reduction stage of the inner products ⟨v_j, t⟩ for all j in
// [params.num, params.den) at once, t = pool vector `params.dst` (paper 000 §3.3: "fuse
// multiple inner products into the same kernel").
//
// Kernel 2 of pipelined GMRES (⟨v_j, v_i⟩ for j = 1 … i−2, classical Gram–Schmidt), the
// inner products of classical GMRES (one at a time for MGS, ⟨v_j, w⟩ for all j for CGS), the
// re-orthogonalisation pass of CGS2, and the Gram matrix VᵀV behind `orthogonality_loss`.
//
// Inner product number q = j − params.num goes to partials slot params.slot + q/4,
// component q%4 (zero in the unused components of the last slot). Eight inner products
// (a chunk) share one pass over t.
//
// The chunks run side by side: with g ≥ C workgroups for C chunks, workgroup w takes chunk
// w mod C over every (g/C)-th block of rows and writes zero partial sums for the other
// chunks at its index, so each slot still holds g partials (what the second stage sums)
// while each workgroup sweeps the rows once, not C times, and different workgroups read
// different basis vectors at the same time. With fewer workgroups than chunks, workgroup w
// sweeps all rows for chunks w, w + g, ….


fn gm_basis_at(j: u32, end: u32, row: u32) -> Real {
    if j < end {
        return pool_get(j * params.n + row);
    }
    return Real(0.0);
}

fn gm_quad(j: u32, end: u32, row: u32) -> vec4<Real> {
    return vec4<Real>(
        gm_basis_at(j, end, row),
        gm_basis_at(j + 1u, end, row),
        gm_basis_at(j + 2u, end, row),
        gm_basis_at(j + 3u, end, row),
    );
}

// Two rows a stride apart per trip (the second clamped to n − 1, its t zeroed past n).
fn gm_dots_chunk(c: u32, first: u32, stride: u32, ids: Ids) {
    let n = params.n;
    let t_off = params.dst * n;
    let end = params.den;
    let j = params.num + 8u * c;
    var a0 = sum_zero();
    var a1 = sum_zero();
    let wide = j + 4u < end;
    for (var row = first; row < n; row = row + 2u * stride) {
        let r1 = min(row + stride, n - 1u);
        let t0 = pool_get(t_off + row);
        var t1 = pool_get(t_off + r1);
        let p0 = gm_quad(j, end, row);
        let p1 = gm_quad(j, end, r1);
        let q0 = gm_quad(j + 4u, end, row);
        let q1 = gm_quad(j + 4u, end, r1);
        if row + stride >= n {
            t1 = Real(0.0);
        }
        a0 = sum_add(a0, t0 * p0 + t1 * p1);
        a1 = sum_add(a1, t0 * q0 + t1 * q1);
    }
    let slot = params.slot + 2u * c;
    store_sum(slot, a0, ids);
    if wide {
        store_sum(slot + 1u, a1, ids);
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let count = params.den - min(params.num, params.den);
    let chunks = (count + 7u) / 8u;
    if chunks == 0u {
        return;
    }
    let quads = (count + 3u) / 4u;
    let g = params.groups;
    let w = ids.wid.x;
    if g >= chunks {
        let c = w % chunks;
        let k = w / chunks;
        let per = (g - 1u - c) / chunks + 1u;
        gm_dots_chunk(c, k * WG + ids.lid, per * WG, ids);
        if ids.lid == 0u {
            for (var cc = 0u; cc < chunks; cc = cc + 1u) {
                if cc != c {
                    partial_store((params.slot + 2u * cc) * g + w, sum_zero());
                    if 2u * cc + 1u < quads {
                        partial_store((params.slot + 2u * cc + 1u) * g + w, sum_zero());
                    }
                }
            }
        }
    } else {
        for (var c = w; c < chunks; c = c + g) {
            gm_dots_chunk(c, ids.lid, WG, ids);
        }
        if ids.lid == 0u {
            for (var cc = 0u; cc < chunks; cc = cc + 1u) {
                if cc % g != w {
                    partial_store((params.slot + 2u * cc) * g + w, sum_zero());
                    if 2u * cc + 1u < quads {
                        partial_store((params.slot + 2u * cc + 1u) * g + w, sum_zero());
                    }
                }
            }
        }
    }
}
