// dot_finish: second reduction stage on the device, one workgroup: sums partials slot
// `params.slot` and stores component `params.comp` in scalars[params.dst] (after moving the
// old value to scalars[dst + 1] with FLAG_SHIFT); with FLAG_MONITOR it records component
// `params.comp_monitor` as the squared residual and tests convergence; with FLAG_POSITIVE a
// stored value ≤ 0 stops the solve as not SPD. This is what a
// BLAS with device-side scalars does between a dot product and the update that uses it.

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let s = sum_partials(params.slot * params.groups, params.groups, ids);
    if ids.lid == 0u {
        if (params.flags & FLAG_SHIFT) != 0u {
            scalars[params.dst + 1u] = scalars[params.dst];
        }
        let v = s[params.comp];
        scalars[params.dst] = v;
        if (params.flags & FLAG_POSITIVE) != 0u && !(v > Real(0.0)) {
            // ⟨p, Ap⟩ ≤ 0: the matrix is not SPD (or the value is NaN).
            if is_finite(v) {
                atomicStore(&state[0], STATUS_NOT_SPD);
            } else {
                atomicStore(&state[0], STATUS_NON_FINITE);
            }
            atomicStore(&state[2], atomicLoad(&state[1]));
        }
        if (params.flags & FLAG_MONITOR) != 0u {
            record_residual(s[params.comp_monitor]);
        }
    }
}
