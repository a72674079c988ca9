// bicg_finish: second reduction stage on the device for classical BiCG (device mode), one
// workgroup — dot_finish with BiCG's breakdown test. It finishes the quantities
//   v = (⟨x,y⟩, ⟨x,x⟩, ⟨y,y⟩, ⟨r,r⟩)
// either packed in the four components of slot `params.slot` (BICG_PACKED: bicg_init's
// output) or from component 0 of slots slot, slot+1, slot+2 (and slot+3 with FLAG_MONITOR),
// written one inner product per `dot` launch. Without Jacobi, ⟨z,z⟩ = ⟨r,r⟩ is not computed
// separately: with FLAG_MONITOR and params.jacobi == 0 the slot+1 value is taken from v.w.
//
// Workgroup 0, thread 0: with FLAG_MONITOR records v.w = ‖r‖² and tests convergence; with
// FLAG_SHIFT moves scalars[dst] to scalars[dst + 1]; stores v.x in scalars[dst]; then, if
// the solve is still running, a non-finite v.x (or, with BICG_ALPHA, a non-finite
// scalars[num]/v.x) stops it as non-finite and |v.x| ≤ ε·√⟨x,x⟩·√⟨y,y⟩ (ε = scalars[4])
// as a breakdown, with `params.comp` (the quantity's code) in state[3].

const BICG_PACKED: u32 = 32u;
const BICG_ALPHA: u32 = 64u;
const BICG_S_EPS: u32 = 4u;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    if current_status(ids) != STATUS_RUNNING {
        return;
    }
    let g = params.groups;
    let monitor = (params.flags & FLAG_MONITOR) != 0u;
    var v = vec4<Real>(Real(0.0));
    if (params.flags & BICG_PACKED) != 0u {
        v = sum_partials(params.slot * g, g, ids);
    } else {
        v.x = sum_partials(params.slot * g, g, ids).x;
        v.z = sum_partials((params.slot + 2u) * g, g, ids).x;
        if monitor {
            v.w = sum_partials((params.slot + 3u) * g, g, ids).x;
        }
        if params.jacobi != 0u || !monitor {
            v.y = sum_partials((params.slot + 1u) * g, g, ids).x;
        } else {
            v.y = v.w;
        }
    }
    if ids.lid == 0u {
        if monitor {
            record_residual(v.w);
        }
        if (params.flags & FLAG_SHIFT) != 0u {
            scalars[params.dst + 1u] = scalars[params.dst];
        }
        scalars[params.dst] = v.x;
        if atomicLoad(&state[0]) == STATUS_RUNNING {
            var non_finite = !is_finite(v.x);
            if (params.flags & BICG_ALPHA) != 0u {
                non_finite = non_finite || !is_finite(scalars[params.num] / v.x);
            }
            let breakdown = abs(v.x) <= scalars[BICG_S_EPS] * sqrt(v.y) * sqrt(v.z);
            if is_finite(v.x) && breakdown {
                atomicStore(&state[0], STATUS_BREAKDOWN);
                atomicStore(&state[3], params.comp);
                atomicStore(&state[2], atomicLoad(&state[1]));
            } else if non_finite {
                atomicStore(&state[0], STATUS_NON_FINITE);
                atomicStore(&state[2], atomicLoad(&state[1]));
            }
        }
    }
}
