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
// The thread works in workgroup memory (G copied in by the workgroup, R and T copied out):
// its loops are chains of dependent loads and stores, which through the storage buffer took
// 21–24 µs per call on an H200 for s = 5 (17–20 µs this way; the rest is the launch and the
// one thread's arithmetic).
//
// params: comp = s, slot = G, dst = R, comp_monitor = T, den = the flag, num = ε's index.

const CA_FLAG_KEEP: u32 = 1u;
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
    for (var k = ids.lid; k < ss; k = k + WG) {
        cq_g[k] = scalars[params.slot + k];
        cq_r[k] = Real(0.0);
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
}
