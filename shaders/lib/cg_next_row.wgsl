// cg_next_row.wgsl: fused CG's iterate j + 1 formed on the fly from iterate j (paper 000,
// Alg. 2 with eq. 3: p' = D⁻¹(r − αAp) + βp), shared by update_spmv_dot_cg (one iteration a
// launch) and cg_cooperative (several across a grid barrier). The kernel defines
//
//   fn r_prev(i: u32) -> Real     fn p_prev(i: u32) -> Real     fn ap_prev(i: u32) -> Real
//
// (iterate j's r, p, Ap at entry i) and the bindings `x` (read_write) and `dinv`, sets `alpha`
// and `beta` before its product, and stores what `next_row` returns.

var<private> alpha: Real;
var<private> beta: Real;

// D⁻¹ (1 without Jacobi) at entry i.
fn scale_at(i: u32) -> Real {
    if params.jacobi != 0u {
        return dinv[i];
    }
    return Real(1.0);
}

// Entry i of the new residual r' = r − αAp.
fn new_residual(i: u32) -> Real {
    return r_prev(i) - alpha * ap_prev(i);
}

// Entry i of the new direction p' = z' + βp, z' = D⁻¹r' (update_cg's expression).
fn new_direction(i: u32, zi: Real) -> Real {
    return zi + beta * p_prev(i);
}

// The product reads p' wherever it reads the vector.
fn spmv_x(col: u32) -> Real {
    return new_direction(col, scale_at(col) * new_residual(col));
}

// Row `row` of iterate j + 1 (its Ap' is the product's value): r', p', and its terms of
// (⟨r,z⟩, ⟨r,r⟩, ⟨p,Ap⟩, ⟨Ap,D⁻¹Ap⟩).
struct NextRow {
    r: Real,
    p: Real,
    terms: vec4<Real>,
}

// Row `q.row` of iterate j + 1 from the product's row q; x += αp in place (only the row's own
// thread reads or writes it). The kernel stores r', p' and Ap' = q.value.
fn next_row(q: SpmvRow) -> NextRow {
    let row = q.row;
    let d = scale_at(row);
    let ri = new_residual(row);
    let zi = d * ri;
    let pi = new_direction(row, zi);
    x[row] = x[row] + alpha * p_prev(row);
    return NextRow(ri, pi, vec4<Real>(ri * zi, ri * ri, pi * q.value, q.value * d * q.value));
}
