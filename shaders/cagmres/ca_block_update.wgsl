// ca_block_update: a block update of basis vectors in place, row by row (one pass over the
// rows of X and Y),
//
//   Y[:, j] ← Σ_l Y[:, l]·T[l, j] − Σ_i X[:, i]·C[i, j]      (j < ny),
//
// X = pool[x0 .. x0 + nx), Y = pool[y0 .. y0 + ny) (disjoint), C = scalars[c + i + nx·j]
// (column-major), T = scalars[t + l + ny·j]. It is BOrth's W ← W − Q_prev C with C as
// ca_block_finish left it on the device, a TSQR's Q = W R⁻¹ (T = R⁻¹ uploaded by the host),
// a Gram–Schmidt step, and x += Q y (CA_C_ADD). Flags:
//   CA_T_IDENTITY  T = I
//   CA_T_RSQRT     T = diag(1/√scalars[t + j(ny+1)]) (0 where that is 0): the
//                  normalisation of a column by its norm² as ca_block_finish stored it
//   CA_NO_X        no X term
//   CA_C_ADD       + X·C instead of − X·C
//   CA_STORE       no Y term: Y ← ±X·C (u = Q y, before a factored M⁻¹ is applied to it)
//   CA_DINV        the X term times D⁻¹ (params.jacobi's diagonal): x += D⁻¹ Q y
//
// params: num = x0, den = nx, dst = y0, comp = ny (≤ CA_MAX_S), slot = c, comp_monitor = t.

const CA_T_IDENTITY: u32 = 1u;
const CA_T_RSQRT: u32 = 2u;
const CA_NO_X: u32 = 4u;
const CA_C_ADD: u32 = 8u;
const CA_STORE: u32 = 16u;
const CA_DINV: u32 = 32u;
const CA_MAX_S: u32 = 16u;

@group(0) @binding(5) var<storage, read_write> pool: array<Real>;
@group(0) @binding(11) var<storage, read> dinv: array<Real>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let n = params.n;
    let nx = params.den;
    let ny = min(params.comp, CA_MAX_S);
    let c = params.slot;
    let t = params.comp_monitor;
    let flags = params.flags;
    let sign = select(Real(-1.0), Real(1.0), (flags & CA_C_ADD) != 0u);
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        var y: array<Real, CA_MAX_S>;
        var out: array<Real, CA_MAX_S>;
        for (var l = 0u; l < ny; l = l + 1u) {
            y[l] = pool[(params.dst + l) * n + row];
        }
        for (var j = 0u; j < ny; j = j + 1u) {
            var v = Real(0.0);
            if (flags & CA_STORE) != 0u {
                v = Real(0.0);
            } else if (flags & CA_T_IDENTITY) != 0u {
                v = y[j];
            } else if (flags & CA_T_RSQRT) != 0u {
                let d = scalars[t + j * (ny + 1u)];
                if d > Real(0.0) {
                    v = y[j] / sqrt(d);
                }
            } else {
                // T is upper triangular (R⁻¹): rows l ≤ j only.
                for (var l = 0u; l <= j; l = l + 1u) {
                    v = v + y[l] * scalars[t + l + ny * j];
                }
            }
            out[j] = v;
        }
        if (flags & CA_NO_X) == 0u {
            var scale = sign;
            if (flags & CA_DINV) != 0u {
                scale = sign * dinv[row];
            }
            for (var i = 0u; i < nx; i = i + 1u) {
                let xv = scale * pool[(params.num + i) * n + row];
                for (var j = 0u; j < ny; j = j + 1u) {
                    out[j] = out[j] + xv * scalars[c + i + nx * j];
                }
            }
        }
        for (var j = 0u; j < ny; j = j + 1u) {
            pool[(params.dst + j) * n + row] = out[j];
        }
    }
}
