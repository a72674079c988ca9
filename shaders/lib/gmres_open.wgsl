// gmres_open.wgsl (on gmres.wgsl and gmres_pool.wgsl): step 1's opening of a GMRES(m) cycle,
// shared by pipelined GMRES's `gmres_spmv_dot` and fused GMRES's `gmres_scale_spmv_dots`:
// ρ0 = √‖r‖² into the cycle-buffer header (and as the estimate of step 0 at
// scalars[params.comp + 1]), the stop on a non-finite ‖r‖² or — `monitor`, `device` checks —
// on ρ0 ≤ the threshold (converged at the restart), then v_0 = r/ρ0 (r = pool vector
// params.den). Every workgroup reaches the same decision from the same sums; only the leader
// writes the scalars. Returns ρ0, or −1 when the cycle stopped. Uniform control flow.

var<workgroup> gm_open_thr: Real;

fn gm_open_cycle(rr: Real, monitor: bool, ids: Ids) -> Real {
    let rho = sqrt(rr);
    if is_leader(ids) {
        scalars[GM_H_RR] = rr;
        scalars[GM_H_RHO] = rho;
        scalars[params.comp + 1u] = rho;
    }
    if !is_finite(rr) {
        gm_leader_stop(ids, GM_STOP_NONFINITE_RR, 0u, STATUS_NON_FINITE);
        return Real(-1.0);
    }
    if monitor {
        if ids.lid == 0u {
            gm_open_thr = scalars[GM_H_THR];
        }
        if rho <= workgroupUniformLoad(&gm_open_thr) {
            gm_leader_stop(ids, GM_STOP_CONVERGED, 0u, STATUS_CONVERGED);
            return Real(-1.0);
        }
    }
    let n = params.n;
    let r_off = params.den * n;
    for (var row = ids.wid.x * WG + ids.lid; row < n; row = row + params.groups * WG) {
        pool_set(row, pool_get(r_off + row) / rho);
    }
    return rho;
}
