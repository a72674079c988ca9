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
//   CA_PYTHAG      (ny = 1, with CA_T_IDENTITY) an Arnoldi step's second BOrth pass and
//                  normalisation in one: y ← (y − X c)/ν with ν² = yᵀy − cᵀc (Pythagoras:
//                  c = Xᵀy, X orthonormal), yᵀy at scalars[c + nx] where ca_block_finish
//                  left it, and ν² stored at scalars[t] for the host (0 scale when ν² ≤ 0:
//                  the step broke down, which the host sees in ν). After the first pass c is
//                  at rounding level against y, so the difference loses nothing (the
//                  low-synchronisation CGS2 of Świrydowicz et al. 2020 does the same).
//
// Four rows per thread, a grid stride apart (the host launches ⌈n/(4·WG)⌉ workgroups):
// enough rows in flight to hide the memory latency of the loops below, and the staging of
// the coefficients (a barrier) paid once per four rows — 4–8 % less time per call than one
// row per thread at n = 1.2e7 on an H200 (BENCHMARKS.md). X is read four columns at a time.
//
// The columns of Y go four at a time into vec4 accumulators (no arrays indexed at run time,
// which compilers spill), two groups of four per pass over X (so X is read once for
// ny ≤ 8), the passes from the last: pass p reads Y[:, l] for l < 8p + 8 only (T is upper
// triangular), which later-written passes do not touch.
//
// The coefficients are staged in workgroup memory as vec4s, one per (group of four columns,
// row of C or T), zero where a column is absent or T is zero: a product then costs one
// workgroup load and four FMAs. Fetching them one scalar at a time (with the bounds tests)
// made the kernel instruction-bound at a third of the memory bandwidth on an H200. When
// they do not fit (very long X blocks) they are read from storage, slower but the same sums.
//
// params: num = x0, den = nx, dst = y0, comp = ny (≤ CA_MAX_S), slot = c, comp_monitor = t.

const CA_T_IDENTITY: u32 = 1u;
const CA_T_RSQRT: u32 = 2u;
const CA_NO_X: u32 = 4u;
const CA_C_ADD: u32 = 8u;
const CA_STORE: u32 = 16u;
const CA_DINV: u32 = 32u;
const CA_PYTHAG: u32 = 64u;
const CA_MAX_S: u32 = 16u;
// vec4 coefficient slots in workgroup memory: C (groups·nx) then T (groups·ny, or groups
// for CA_T_RSQRT), groups = 2·⌈ny/8⌉ (even: a pass takes two).
const CU_STAGE4: u32 = 384u;

@group(0) @binding(11) var<storage, read> dinv: array<Real>;

var<workgroup> cu_stage: array<vec4<Real>, CU_STAGE4>;

// C[i, j] (0 for j ≥ ny), from storage.
fn cu_c(i: u32, j: u32) -> Real {
    if j >= params.comp {
        return Real(0.0);
    }
    return scalars[params.slot + i + params.den * j];
}

// T[l, j] (0 for j ≥ ny or l > j), from storage.
fn cu_t(l: u32, j: u32) -> Real {
    let ny = params.comp;
    if j >= ny || l > j {
        return Real(0.0);
    }
    return scalars[params.comp_monitor + l + ny * j];
}

// 1/√(norm² of column j) (0 for j ≥ ny or a norm² that is not positive), from storage.
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

// C[i, 4g … 4g+3].
fn cu_c4_load(i: u32, g: u32) -> vec4<Real> {
    let j = 4u * g;
    return vec4<Real>(cu_c(i, j), cu_c(i, j + 1u), cu_c(i, j + 2u), cu_c(i, j + 3u));
}

// T[l, 4g … 4g+3].
fn cu_t4_load(l: u32, g: u32) -> vec4<Real> {
    let j = 4u * g;
    return vec4<Real>(cu_t(l, j), cu_t(l, j + 1u), cu_t(l, j + 2u), cu_t(l, j + 3u));
}

// The normalisations of columns 4g … 4g+3.
fn cu_r4_load(g: u32) -> vec4<Real> {
    let j = 4u * g;
    return vec4<Real>(cu_rsqrt(j), cu_rsqrt(j + 1u), cu_rsqrt(j + 2u), cu_rsqrt(j + 3u));
}

fn cu_c4(i: u32, g: u32, staged: bool) -> vec4<Real> {
    if staged {
        return cu_stage[g * params.den + i];
    }
    return cu_c4_load(i, g);
}

// T's vec4 (l, g), or for CA_T_RSQRT (l unused) group g's normalisations; `t0` is where the
// staged T starts.
fn cu_t4(l: u32, g: u32, t0: u32, staged: bool, rsqrt: bool) -> vec4<Real> {
    if rsqrt {
        if staged {
            return cu_stage[t0 + g];
        }
        return cu_r4_load(g);
    }
    if staged {
        return cu_stage[t0 + g * params.comp + l];
    }
    return cu_t4_load(l, g);
}

fn cu_y(j: u32, row: u32) -> Real {
    if j < params.comp {
        return pool_get((params.dst + j) * params.n + row);
    }
    return Real(0.0);
}

// Y[row, 4g … 4g+3] (0 past ny).
fn cu_y4(g: u32, row: u32) -> vec4<Real> {
    let j = 4u * g;
    return vec4<Real>(cu_y(j, row), cu_y(j + 1u, row), cu_y(j + 2u, row), cu_y(j + 3u, row));
}

// The Y term of group g for `row`: Σ_l Y[row, l]·T[l, 4g …] (or its special forms).
fn cu_y_term(g: u32, row: u32, t0: u32, staged: bool) -> vec4<Real> {
    let flags = params.flags;
    if (flags & CA_STORE) != 0u {
        return vec4<Real>(Real(0.0));
    }
    if (flags & CA_T_IDENTITY) != 0u {
        return cu_y4(g, row);
    }
    if (flags & CA_T_RSQRT) != 0u {
        return cu_y4(g, row) * cu_t4(0u, g, t0, staged, true);
    }
    // Y[row, l] for l < 4g + 4 (T is upper triangular), four loads before their products:
    // a loop of load-then-multiply keeps one load in flight.
    let top = min(4u * g + 4u, params.comp);
    let base = params.dst * params.n + row;
    var v = vec4<Real>(Real(0.0));
    var l = 0u;
    for (; l + 4u <= top; l = l + 4u) {
        let y0 = pool_get(base + l * params.n);
        let y1 = pool_get(base + (l + 1u) * params.n);
        let y2 = pool_get(base + (l + 2u) * params.n);
        let y3 = pool_get(base + (l + 3u) * params.n);
        v = v + y0 * cu_t4(l, g, t0, staged, false) + y1 * cu_t4(l + 1u, g, t0, staged, false)
            + y2 * cu_t4(l + 2u, g, t0, staged, false) + y3 * cu_t4(l + 3u, g, t0, staged, false);
    }
    for (; l < top; l = l + 1u) {
        v = v + pool_get(base + l * params.n) * cu_t4(l, g, t0, staged, false);
    }
    return v;
}

fn cu_store(g: u32, row: u32, v: vec4<Real>) {
    let j = 4u * g;
    let ny = params.comp;
    let base = (params.dst + j) * params.n + row;
    if j < ny {
        pool_set(base, v.x);
    }
    if j + 1u < ny {
        pool_set(base + params.n, v.y);
    }
    if j + 2u < ny {
        pool_set(base + 2u * params.n, v.z);
    }
    if j + 3u < ny {
        pool_set(base + 3u * params.n, v.w);
    }
}

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let nx = params.den;
    let ny = min(params.comp, CA_MAX_S);
    let flags = params.flags;
    let with_x = (flags & CA_NO_X) == 0u;
    let rsqrt = (flags & (CA_T_IDENTITY | CA_STORE)) == 0u && (flags & CA_T_RSQRT) != 0u;
    let full_t = (flags & (CA_T_IDENTITY | CA_T_RSQRT | CA_STORE)) == 0u;
    let passes = (ny + 7u) / 8u;
    let groups = 2u * passes;
    let t0 = groups * nx;
    var t_len = 0u;
    if full_t {
        t_len = groups * ny;
    } else if rsqrt {
        t_len = groups;
    }
    let total = t0 + t_len;
    let staged = total <= CU_STAGE4;
    if staged {
        for (var k = ids.lid; k < total; k = k + WG) {
            if k < t0 {
                cu_stage[k] = cu_c4_load(k % nx, k / nx);
            } else if rsqrt {
                cu_stage[k] = cu_r4_load(k - t0);
            } else {
                cu_stage[k] = cu_t4_load((k - t0) % ny, (k - t0) / ny);
            }
        }
    }
    workgroupBarrier();
    // CA_PYTHAG: ν² = yᵀy − cᵀc, the same in every thread; the result's scale 1/ν.
    var unit = Real(1.0);
    if (flags & CA_PYTHAG) != 0u {
        var cc = Real(0.0);
        for (var i = 0u; i < nx; i = i + 1u) {
            let c = cu_c4(i, 0u, staged).x;
            cc = cc + c * c;
        }
        let nu2 = scalars[params.slot + nx] - cc;
        if nu2 > Real(0.0) {
            unit = Real(1.0) / sqrt(nu2);
        } else {
            unit = Real(0.0);
        }
        if ids.wid.x == 0u && ids.wid.y == 0u && ids.lid == 0u {
            scalars[params.comp_monitor] = nu2;
        }
    }
    let sign = select(Real(-1.0), Real(1.0), (flags & CA_C_ADD) != 0u);
    let w = ids.wid.y * ids.nwg.x + ids.wid.x;
    // A spare workgroup of a grid split into two dimensions would start at a row another
    // workgroup updates too (in place: the update applied twice). The host launches at most
    // one dimension's worth; this keeps the kernel right if it ever does not.
    if w >= params.groups {
        return;
    }
    let first = w * WG + ids.lid;
    for (var row = first; row < n; row = row + params.groups * WG) {
        var scale = sign;
        if (flags & CA_DINV) != 0u {
            scale = sign * dinv[row];
        }
        for (var pp = 0u; pp < passes; pp = pp + 1u) {
            let p = passes - 1u - pp;
            let ga = 2u * p;
            let gb = ga + 1u;
            // Group gb holds columns only when ny > 8p + 4.
            let has_b = 4u * gb < ny;
            var va = cu_y_term(ga, row, t0, staged);
            var vb = vec4<Real>(Real(0.0));
            if has_b {
                vb = cu_y_term(gb, row, t0, staged);
            }
            if with_x {
                var acc_a = vec4<Real>(Real(0.0));
                var acc_b = vec4<Real>(Real(0.0));
                var i = 0u;
                // Four independent loads before their products; group gb's products only
                // when it holds columns (a uniform branch).
                for (; i + 4u <= nx; i = i + 4u) {
                    let x0 = pool_get((params.num + i) * n + row);
                    let x1 = pool_get((params.num + i + 1u) * n + row);
                    let x2 = pool_get((params.num + i + 2u) * n + row);
                    let x3 = pool_get((params.num + i + 3u) * n + row);
                    acc_a = acc_a + x0 * cu_c4(i, ga, staged) + x1 * cu_c4(i + 1u, ga, staged)
                        + x2 * cu_c4(i + 2u, ga, staged) + x3 * cu_c4(i + 3u, ga, staged);
                    if has_b {
                        acc_b = acc_b + x0 * cu_c4(i, gb, staged) + x1 * cu_c4(i + 1u, gb, staged)
                            + x2 * cu_c4(i + 2u, gb, staged) + x3 * cu_c4(i + 3u, gb, staged);
                    }
                }
                for (; i < nx; i = i + 1u) {
                    let x = pool_get((params.num + i) * n + row);
                    acc_a = acc_a + x * cu_c4(i, ga, staged);
                    if has_b {
                        acc_b = acc_b + x * cu_c4(i, gb, staged);
                    }
                }
                va = va + scale * acc_a;
                vb = vb + scale * acc_b;
            }
            va = va * unit;
            cu_store(ga, row, va);
            if has_b {
                cu_store(gb, row, vb);
            }
        }
    }
}
