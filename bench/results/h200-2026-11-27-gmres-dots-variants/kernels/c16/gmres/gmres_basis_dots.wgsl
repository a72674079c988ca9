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

fn gm_dots_chunk(c: u32, first: u32, stride: u32, ids: Ids) {
    let n = params.n;
    let t_off = params.dst * n;
    let end = params.den;
    let j = params.num + 16u * c;
    var a0 = sum_zero();
    var a1 = sum_zero();
    var a2 = sum_zero();
    var a3 = sum_zero();
    let q1 = j + 4u < end;
    let q2 = j + 8u < end;
    let q3 = j + 12u < end;
    for (var row = first; row < n; row = row + stride) {
        let t = pool_get(t_off + row);
        a0 = sum_add(a0, t * gm_quad(j, end, row));
        if q1 {
            a1 = sum_add(a1, t * gm_quad(j + 4u, end, row));
        }
        if q2 {
            a2 = sum_add(a2, t * gm_quad(j + 8u, end, row));
        }
        if q3 {
            a3 = sum_add(a3, t * gm_quad(j + 12u, end, row));
        }
    }
    let slot = params.slot + 4u * c;
    store_sum(slot, a0, ids);
    if q1 {
        store_sum(slot + 1u, a1, ids);
    }
    if q2 {
        store_sum(slot + 2u, a2, ids);
    }
    if q3 {
        store_sum(slot + 3u, a3, ids);
    }
}

fn gm_zero_chunk(cc: u32, quads: u32, w: u32, g: u32) {
    for (var k = 0u; k < 4u; k = k + 1u) {
        if 4u * cc + k < quads {
            partial_store((params.slot + 4u * cc + k) * g + w, sum_zero());
        }
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let count = params.den - min(params.num, params.den);
    let chunks = (count + 15u) / 16u;
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
                    gm_zero_chunk(cc, quads, w, g);
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
                    gm_zero_chunk(cc, quads, w, g);
                }
            }
        }
    }
}
