// row_sum.wgsl: how the format libraries (shaders/lib/format_*.wgsl) accumulate a row of A·x:
//
//   alias RowSum                                the type of a row's sum (SpmvRow.value)
//   fn row_zero() -> RowSum                     the empty sum
//   fn row_fma(acc: RowSum, a: Real, x: Real) -> RowSum   acc + a·x
//   fn row_add(acc: RowSum, s: RowSum) -> RowSum          acc + s (partial sums of a row)
//
// This file is the plain accumulation in Real that every kernel with a matrix gets; a kernel
// built on the piece `ds_rows.wgsl` gets double-single rows instead (the true residual of f32
// solves, shaders/ds/true_residual_ds.wgsl). The host prepends exactly one of the two.

alias RowSum = Real;

fn row_zero() -> RowSum {
    return Real(0.0);
}

fn row_fma(acc: RowSum, a: Real, x: Real) -> RowSum {
    return acc + a * x;
}

fn row_add(acc: RowSum, s: RowSum) -> RowSum {
    return acc + s;
}
