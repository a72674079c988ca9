// ca_block_finish: the second reduction stage of ca_block_dots, one workgroup per tile: the
// nx × ny inner products D (column-major, leading dimension nx) into the cycle buffer
// (`scalars`) at params.dst. With CA_ACC_STORE D is also stored at params.comp_monitor, with
// CA_ACC_ADD added there: BOrth's C = C₁ + C₂ over its two passes, a Gram–Schmidt TSQR's
// column of R over its passes. What the host reads back once per block (or not at all: the
// next ca_block_update reads D on the device). With CA_ACC_SKIP_LAST the last row of D is
// not accumulated: an Arnoldi step's second BOrth pass computes [Q, w]ᵀw, whose last entry
// wᵀw goes to D only (ca_block_update's CA_PYTHAG makes the norm from it). With
// CA_ACC_ROWS only the first params.num rows of D are accumulated, at i + num·j: BOrth's
// second pass fused with CholQR computes [Q, W]ᵀW, whose top rows are C₂ (leading dimension
// num = the columns of Q) and whose bottom s × s block is WᵀW, for ca_cholqr only.
//
// params: slot, den = nx, comp = ny, dst, comp_monitor = the accumulator, flags, num = the
// accumulated rows (CA_ACC_ROWS).

const CA_ACC_STORE: u32 = 1u;
const CA_ACC_ADD: u32 = 2u;
const CA_ACC_SKIP_LAST: u32 = 4u;
const CA_ACC_ROWS: u32 = 8u;

@compute @workgroup_size(WG)
fn main(ids: Ids) {
    let nx = params.den;
    let quads = (nx + 3u) / 4u;
    let tiles = quads * params.comp;
    let tile = ids.wid.y * ids.nwg.x + ids.wid.x;
    if tile >= tiles {
        return;
    }
    let s = sum_partials((params.slot + tile) * params.groups, params.groups, ids);
    if ids.lid == 0u {
        let j = tile / quads;
        for (var c = 0u; c < 4u; c = c + 1u) {
            let i = 4u * (tile % quads) + c;
            if i < nx {
                let k = i + nx * j;
                scalars[params.dst + k] = s[c];
                if (params.flags & CA_ACC_SKIP_LAST) != 0u && i + 1u == nx {
                    continue;
                }
                var ka = k;
                if (params.flags & CA_ACC_ROWS) != 0u {
                    if i >= params.num {
                        continue;
                    }
                    ka = i + params.num * j;
                }
                if (params.flags & CA_ACC_STORE) != 0u {
                    scalars[params.comp_monitor + ka] = s[c];
                } else if (params.flags & CA_ACC_ADD) != 0u {
                    scalars[params.comp_monitor + ka] = scalars[params.comp_monitor + ka] + s[c];
                }
            }
        }
    }
}
