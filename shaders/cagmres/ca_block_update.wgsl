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
// The columns of Y go four at a time into vec4 accumulators (no arrays indexed at run time,
// which compilers spill), the groups of four from the last: group g reads Y[:, l] for
// l < 4g + 4 only (T is upper triangular), which later-written groups do not touch. C and T
// are staged in workgroup memory when they fit.
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

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let nx = params.den;
    let ny = min(params.comp, CA_MAX_S);
    let flags = params.flags;
    let with_x = (flags & CA_NO_X) == 0u;
    let full_t = (flags & (CA_T_IDENTITY | CA_T_RSQRT | CA_STORE)) == 0u;
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
    let first = (ids.wid.y * ids.nwg.x + ids.wid.x) * WG + ids.lid;
    for (var row = first; row < n; row = row + params.groups * WG) {
        var scale = sign;
        if (flags & CA_DINV) != 0u {
            scale = sign * dinv[row];
        }
        for (var gg = 0u; gg < groups4; gg = gg + 1u) {
            let j0 = 4u * (groups4 - 1u - gg);
            var v = vec4<Real>(Real(0.0));
            if (flags & CA_STORE) != 0u {
                v = vec4<Real>(Real(0.0));
            } else if (flags & CA_T_IDENTITY) != 0u {
                v = vec4<Real>(cu_y(j0, row), cu_y(j0 + 1u, row), cu_y(j0 + 2u, row), cu_y(j0 + 3u, row));
            } else if (flags & CA_T_RSQRT) != 0u {
                v = vec4<Real>(
                    cu_y(j0, row) * cu_rsqrt(j0),
                    cu_y(j0 + 1u, row) * cu_rsqrt(j0 + 1u),
                    cu_y(j0 + 2u, row) * cu_rsqrt(j0 + 2u),
                    cu_y(j0 + 3u, row) * cu_rsqrt(j0 + 3u),
                );
            } else if full_t {
                for (var l = 0u; l < min(j0 + 4u, ny); l = l + 1u) {
                    let yl = pool[(params.dst + l) * n + row];
                    v = v + yl * vec4<Real>(
                        cu_t(l, j0, staged),
                        cu_t(l, j0 + 1u, staged),
                        cu_t(l, j0 + 2u, staged),
                        cu_t(l, j0 + 3u, staged),
                    );
                }
            }
            if with_x {
                var acc = vec4<Real>(Real(0.0));
                var i = 0u;
                // Four independent loads before their products.
                for (; i + 4u <= nx; i = i + 4u) {
                    let x0 = pool[(params.num + i) * n + row];
                    let x1 = pool[(params.num + i + 1u) * n + row];
                    let x2 = pool[(params.num + i + 2u) * n + row];
                    let x3 = pool[(params.num + i + 3u) * n + row];
                    acc = acc + x0 * cu_c4(i, j0, staged) + x1 * cu_c4(i + 1u, j0, staged)
                        + x2 * cu_c4(i + 2u, j0, staged) + x3 * cu_c4(i + 3u, j0, staged);
                }
                for (; i < nx; i = i + 1u) {
                    acc = acc + pool[(params.num + i) * n + row] * cu_c4(i, j0, staged);
                }
                v = v + scale * acc;
            }
            for (var c = 0u; c < 4u; c = c + 1u) {
                if j0 + c < ny {
                    pool[(params.dst + j0 + c) * n + row] = v[c];
                }
            }
        }
    }
}
