// ca_block_update: a block update of basis vectors in place, row by row (one pass over the
// rows of X and Y),
//
//   Y[:, j] ← Σ_l Y[:, l]·T[l, j] − Σ_i X[:, i]·C[i, j]      (j < ny),
//
// X = pool[x0 .. x0 + nx), Y = pool[y0 .. y0 + ny) (disjoint), C = scalars[c + i + nx·j]
// (column-major), T = scalars[t + l + ny·j] (upper triangular). It is BOrth's
// W ← W − Q_prev C with C as ca_block_finish left it on the device, a TSQR's Q = W R⁻¹
// (T = R⁻¹ uploaded by the host), a Gram–Schmidt step, and x += Q y (CA_C_ADD). Flags:
//   CA_T_IDENTITY  T = I
//   CA_T_RSQRT     T = diag(1/√scalars[t + j(ny+1)]) (0 where that is 0): the
//                  normalisation of a column by its norm² as ca_block_finish stored it
//   CA_NO_X        no X term
//   CA_C_ADD       + X·C instead of − X·C
//   CA_STORE       no Y term: Y ← ±X·C (u = Q y, before a factored M⁻¹ is applied to it)
//   CA_DINV        the X term times D⁻¹ (params.jacobi's diagonal): x += D⁻¹ Q y
//
// One row per thread (the host launches ⌈n/WG⌉ workgroups: enough rows in flight to hide
// the memory latency of the dependent loops below), X read four columns at a time.
//
// Each row's Y (≤ 16 columns) is loaded once into four vec4 registers, X's columns are read
// once (four loads in flight) into four vec4 accumulators, and the new Y is written once: the
// bytes a block update must move and no more. No array is indexed at run time (compilers
// spill those to memory). C and T are staged in workgroup memory when they fit.
//
// params: num = x0, den = nx, dst = y0, comp = ny (≤ CA_MAX_S), slot = c, comp_monitor = t.

const CA_T_IDENTITY: u32 = 1u;
const CA_T_RSQRT: u32 = 2u;
const CA_NO_X: u32 = 4u;
const CA_C_ADD: u32 = 8u;
const CA_STORE: u32 = 16u;
const CA_DINV: u32 = 32u;
const CA_MAX_S: u32 = 16u;
// Coefficients staged in workgroup memory: C (nx·ny) then T (ny·ny).
const CU_STAGE: u32 = 1280u;

@group(0) @binding(5) var<storage, read_write> pool: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

var<workgroup> cu_coef: array<Real, CU_STAGE>;

// C[i, j] (0 for j ≥ ny).
fn cu_c(i: u32, j: u32, staged: bool) -> Real {
    let nx = params.den;
    if j >= params.comp {
        return Real(0.0);
    }
    let k = i + nx * j;
    if staged {
        return cu_coef[k];
    }
    return scalars[params.slot + k];
}

// C[i, j0 … j0+3].
fn cu_c4(i: u32, j0: u32, staged: bool) -> vec4<Real> {
    return vec4<Real>(
        cu_c(i, j0, staged),
        cu_c(i, j0 + 1u, staged),
        cu_c(i, j0 + 2u, staged),
        cu_c(i, j0 + 3u, staged),
    );
}

// T[l, j] (0 for j ≥ ny or l > j).
fn cu_t(l: u32, j: u32, staged: bool) -> Real {
    let ny = params.comp;
    if j >= ny || l > j {
        return Real(0.0);
    }
    let k = l + ny * j;
    if staged {
        return cu_coef[params.den * ny + k];
    }
    return scalars[params.comp_monitor + k];
}

fn cu_y(j: u32, row: u32) -> Real {
    if j < params.comp {
        return pool[(params.dst + j) * params.n + row];
    }
    return Real(0.0);
}

fn cu_rsqrt(j: u32) -> Real {
    if j >= params.comp {
        return Real(0.0);
    }
    let d = scalars[params.comp_monitor + j * (params.comp + 1u)];
    if d > Real(0.0) {
        return Real(1.0) / sqrt(d);
    }
    return Real(0.0);
}

// Entry l of the row's Y held in four vec4 registers.
fn cu_pick(y0: vec4<Real>, y1: vec4<Real>, y2: vec4<Real>, y3: vec4<Real>, l: u32) -> Real {
    let c = l % 4u;
    switch l / 4u {
        case 0u: {
            return y0[c];
        }
        case 1u: {
            return y1[c];
        }
        case 2u: {
            return y2[c];
        }
        default: {
            return y3[c];
        }
    }
}

fn cu_y4(g: u32, row: u32) -> vec4<Real> {
    let j = 4u * g;
    return vec4<Real>(cu_y(j, row), cu_y(j + 1u, row), cu_y(j + 2u, row), cu_y(j + 3u, row));
}

// The Y·T part of group g (columns 4g … 4g+3) from the row's Y.
fn cu_yt(
    g: u32,
    y0: vec4<Real>,
    y1: vec4<Real>,
    y2: vec4<Real>,
    y3: vec4<Real>,
    staged: bool,
) -> vec4<Real> {
    let flags = params.flags;
    let ny = min(params.comp, CA_MAX_S);
    let j0 = 4u * g;
    let own = cu_pick4(g, y0, y1, y2, y3);
    if (flags & CA_STORE) != 0u {
        return vec4<Real>(Real(0.0));
    }
    if (flags & CA_T_IDENTITY) != 0u {
        return own;
    }
    if (flags & CA_T_RSQRT) != 0u {
        return own * vec4<Real>(cu_rsqrt(j0), cu_rsqrt(j0 + 1u), cu_rsqrt(j0 + 2u), cu_rsqrt(j0 + 3u));
    }
    // T upper triangular: rows l ≤ j only.
    var v = vec4<Real>(Real(0.0));
    for (var l = 0u; l < min(j0 + 4u, ny); l = l + 1u) {
        v = v + cu_pick(y0, y1, y2, y3, l) * vec4<Real>(
            cu_t(l, j0, staged),
            cu_t(l, j0 + 1u, staged),
            cu_t(l, j0 + 2u, staged),
            cu_t(l, j0 + 3u, staged),
        );
    }
    return v;
}

fn cu_pick4(g: u32, y0: vec4<Real>, y1: vec4<Real>, y2: vec4<Real>, y3: vec4<Real>) -> vec4<Real> {
    switch g {
        case 0u: {
            return y0;
        }
        case 1u: {
            return y1;
        }
        case 2u: {
            return y2;
        }
        default: {
            return y3;
        }
    }
}

fn cu_store4(g: u32, v: vec4<Real>, row: u32) {
    let ny = min(params.comp, CA_MAX_S);
    for (var c = 0u; c < 4u; c = c + 1u) {
        let j = 4u * g + c;
        if j < ny {
            pool[(params.dst + j) * params.n + row] = v[c];
        }
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let nx = params.den;
    let ny = min(params.comp, CA_MAX_S);
    let flags = params.flags;
    let with_x = (flags & CA_NO_X) == 0u;
    let total = nx * ny + ny * ny;
    let staged = total <= CU_STAGE;
    if staged {
        for (var k = ids.lid; k < total; k = k + WG) {
            if k < nx * ny {
                cu_coef[k] = scalars[params.slot + k];
            } else {
                cu_coef[k] = scalars[params.comp_monitor + k - nx * ny];
            }
        }
    }
    workgroupBarrier();
    let sign = select(Real(-1.0), Real(1.0), (flags & CA_C_ADD) != 0u);
    let groups4 = (ny + 3u) / 4u;
    let zero = vec4<Real>(Real(0.0));
    let first = (ids.wid.y * ids.nwg.x + ids.wid.x) * WG + ids.lid;
    for (var row = first; row < n; row = row + params.groups * WG) {
        // The row's Y, once (not needed when it is only overwritten).
        var y0 = zero;
        var y1 = zero;
        var y2 = zero;
        var y3 = zero;
        if (flags & CA_STORE) == 0u {
            y0 = cu_y4(0u, row);
            if groups4 > 1u {
                y1 = cu_y4(1u, row);
            }
            if groups4 > 2u {
                y2 = cu_y4(2u, row);
            }
            if groups4 > 3u {
                y3 = cu_y4(3u, row);
            }
        }
        // X·C, X read once: four loads in flight, four vec4 accumulators.
        var a0 = zero;
        var a1 = zero;
        var a2 = zero;
        var a3 = zero;
        if with_x {
            var i = 0u;
            for (; i + 4u <= nx; i = i + 4u) {
                let x = vec4<Real>(
                    pool[(params.num + i) * n + row],
                    pool[(params.num + i + 1u) * n + row],
                    pool[(params.num + i + 2u) * n + row],
                    pool[(params.num + i + 3u) * n + row],
                );
                for (var q = 0u; q < 4u; q = q + 1u) {
                    let xv = x[q];
                    a0 = a0 + xv * cu_c4(i + q, 0u, staged);
                    if groups4 > 1u {
                        a1 = a1 + xv * cu_c4(i + q, 4u, staged);
                    }
                    if groups4 > 2u {
                        a2 = a2 + xv * cu_c4(i + q, 8u, staged);
                    }
                    if groups4 > 3u {
                        a3 = a3 + xv * cu_c4(i + q, 12u, staged);
                    }
                }
            }
            for (; i < nx; i = i + 1u) {
                let xv = pool[(params.num + i) * n + row];
                a0 = a0 + xv * cu_c4(i, 0u, staged);
                if groups4 > 1u {
                    a1 = a1 + xv * cu_c4(i, 4u, staged);
                }
                if groups4 > 2u {
                    a2 = a2 + xv * cu_c4(i, 8u, staged);
                }
                if groups4 > 3u {
                    a3 = a3 + xv * cu_c4(i, 12u, staged);
                }
            }
            var scale = sign;
            if (flags & CA_DINV) != 0u {
                scale = sign * dinv[row];
            }
            a0 = scale * a0;
            a1 = scale * a1;
            a2 = scale * a2;
            a3 = scale * a3;
        }
        // Every new column from the old Y (all read above), then written once.
        cu_store4(0u, cu_yt(0u, y0, y1, y2, y3, staged) + a0, row);
        if groups4 > 1u {
            cu_store4(1u, cu_yt(1u, y0, y1, y2, y3, staged) + a1, row);
        }
        if groups4 > 2u {
            cu_store4(2u, cu_yt(2u, y0, y1, y2, y3, staged) + a2, row);
        }
        if groups4 > 3u {
            cu_store4(3u, cu_yt(3u, y0, y1, y2, y3, staged) + a3, row);
        }
    }
}
