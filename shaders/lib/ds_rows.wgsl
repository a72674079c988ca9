// ds_rows.wgsl: the row accumulation of shaders/lib/row_sum.wgsl in double-single (on
// ds.wgsl): every product a·x exact (two_prod), the row's sum in vec2<f32>(hi, lo) with
// ds_add (relative error ≤ 3u² + 13u³ per addition, u = 2⁻²⁴). A kernel built on this piece
// gets it instead of row_sum.wgsl, so every storage format's row loop runs in double-single
// unchanged. For f32 kernels (in an f64 build the values are rounded to f32 first).

alias RowSum = vec2<f32>;

fn row_zero() -> RowSum {
    return vec2<f32>(0.0);
}

fn row_fma(acc: RowSum, a: Real, x: Real) -> RowSum {
    return ds_fma_f32(acc, f32(a), f32(x));
}

fn row_add(acc: RowSum, s: RowSum) -> RowSum {
    return ds_add(acc, s);
}
