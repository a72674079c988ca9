// ca_cholqr: CholQR's host step on the device, so that a CholQR/CholQR2 cycle needs no host
// value before it ends (a deferred cycle, src/solvers/cagmres). One workgroup, one thread
// (s ≤ 16: s³/3 flops):
//
//   R = chol(G)   G = the block's Gram matrix WᵀW (s × s at params.slot, column-major)
//   T = R⁻¹       at params.comp_monitor: what the next ca_block_update applies (Q = W·T)
//
// R goes to params.dst (leading dimension s) for the host's end-of-cycle read. A pivot that
// is not finite or not above (s + √n)·ε·G_kk — the CPU reference's rule
// (`cpu::cagmres::tsqr::cholesky`, with its f64 ε at scalars[params.num]) — sets the flag at params.den
// and T = I: the host then runs the cycle again with its own CholQR and the SVQR fallback.
// CA_FLAG_KEEP (CholQR2's second pass) keeps a flag the first pass set.
//
// CA_FLAG_PIP: BOrth's second pass fused with CholQR (a Pythagorean inner product, as the
// Arnoldi step's CA_PYTHAG of ca_block_update): params.slot holds D = [Q, W]ᵀW from ONE
// ca_block_dots, (k + s) × s with k = params.jacobi, whose top k rows are C₂ = QᵀW and whose
// bottom s × s block is WᵀW. The Gram matrix factored is that of W − Q·C₂,
//
//   G = WᵀW − C₂ᵀC₂            (Q orthonormal; after BOrth's first pass C₂ is at the
//                               rounding level against W, so the difference loses nothing)
//
// and C₂·T goes to params.ell_width (k × s, leading dimension k), so that ONE
// ca_block_update makes (W − Q·C₂)·T = W·T − Q·(C₂T): the second projection and the first
// CholQR in one pass over Q and W instead of two dots and two updates (CPU twin:
// `cpu::cagmres::tsqr::borth`).
//
// The thread works in workgroup memory (G copied in by the workgroup, R and T copied out):
// its loops are chains of dependent loads and stores, which through the storage buffer took
// 21–24 µs per call on an H200 for s = 5 (17–20 µs this way; the rest is the launch and the
// one thread's arithmetic).
//
// params: comp = s, slot = G (CA_FLAG_PIP: D), dst = R, comp_monitor = T, den = the flag,
// num = ε's index; CA_FLAG_PIP: jacobi = k, ell_width = where C₂·T goes.

const CA_FLAG_KEEP: u32 = 1u;
const CA_FLAG_PIP: u32 = 2u;
const CQ_MAX: u32 = 256u;

var<workgroup> cq_g: array<Real, CQ_MAX>;
var<workgroup> cq_r: array<Real, CQ_MAX>;
var<workgroup> cq_t: array<Real, CQ_MAX>;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if ids.wid.x != 0u || ids.wid.y != 0u {
        return;
    }
    let s = min(params.comp, 16u);
    let ss = s * s;
    let pip = (params.flags & CA_FLAG_PIP) != 0u;
    let rows = params.jacobi;
    let ld = rows + s;
    for (var e = ids.lid; e < ss; e = e + WG) {
        if pip {
            // G[a, b] = (WᵀW)[a, b] − Σ_i C₂[i, a]·C₂[i, b].
            let a = e % s;
            let b = e / s;
            var g = scalars[params.slot + rows + a + ld * b];
            for (var i = 0u; i < rows; i = i + 1u) {
                g = g - scalars[params.slot + i + ld * a] * scalars[params.slot + i + ld * b];
            }
            cq_g[e] = g;
        } else {
            cq_g[e] = scalars[params.slot + e];
        }
        cq_r[e] = Real(0.0);
    }
    workgroupBarrier();
    if ids.lid == 0u {
        let eps = scalars[params.num];
        var fail = false;
        for (var k = 0u; k < s; k = k + 1u) {
            let gkk = cq_g[k + s * k];
            var d = gkk;
            for (var l = 0u; l < k; l = l + 1u) {
                let rlk = cq_r[l + s * k];
                d = d - rlk * rlk;
            }
            let tol = (Real(s) + sqrt(Real(params.n))) * eps * abs(gkk);
            if !is_finite(d) || d <= tol {
                fail = true;
                break;
            }
            let rkk = sqrt(d);
            cq_r[k + s * k] = rkk;
            for (var j = k + 1u; j < s; j = j + 1u) {
                var v = cq_g[k + s * j];
                for (var l = 0u; l < k; l = l + 1u) {
                    v = v - cq_r[l + s * k] * cq_r[l + s * j];
                }
                cq_r[k + s * j] = v / rkk;
            }
        }
        // T e_k = (e_k − Σ_{j<k} R_jk T e_j) / R_kk, column by column (T = I after a failure).
        for (var k = 0u; k < s; k = k + 1u) {
            for (var i = 0u; i < s; i = i + 1u) {
                var v = select(Real(0.0), Real(1.0), i == k);
                if !fail {
                    for (var j = 0u; j < k; j = j + 1u) {
                        v = v - cq_r[j + s * k] * cq_t[i + s * j];
                    }
                    v = v / cq_r[k + s * k];
                }
                cq_t[i + s * k] = v;
            }
        }
        let flag = select(Real(0.0), Real(1.0), fail);
        if (params.flags & CA_FLAG_KEEP) != 0u {
            scalars[params.den] = max(scalars[params.den], flag);
        } else {
            scalars[params.den] = flag;
        }
    }
    workgroupBarrier();
    for (var k = ids.lid; k < ss; k = k + WG) {
        scalars[params.dst + k] = cq_r[k];
        scalars[params.comp_monitor + k] = cq_t[k];
    }
    if pip {
        // C₂·T (T upper triangular; T = I after a failure leaves C₂).
        for (var e = ids.lid; e < rows * s; e = e + WG) {
            let i = e % rows;
            let b = e / rows;
            var v = Real(0.0);
            for (var c = 0u; c <= b; c = c + 1u) {
                v = v + scalars[params.slot + i + ld * c] * cq_t[c + s * b];
            }
            scalars[params.ell_width + e] = v;
        }
    }
}
