// sum_plain.wgsl: the running sums of the reductions, plain flavour (the default). Every
// reducing kernel accumulates its terms in a `Sum` and reduces it with the interface below;
// sum_compensated.wgsl implements the same interface with error terms (ShaderConfig::
// compensated), so one kernel source serves both. Here a Sum is its value and every function
// is the plain add it replaces.
//
//   fn sum_zero() -> Sum                         the empty sum
//   fn sum_of(v: vec4<Real>) -> Sum              v with no error term
//   fn sum_add(a: Sum, v: vec4<Real>) -> Sum     a + v
//   fn sum_add_x(a: Sum, v: Real) -> Sum         a + (v, 0, 0, 0)
//   fn sum_merge(a: Sum, b: Sum) -> Sum          a + b
//   fn sum_value(a: Sum) -> vec4<Real>           the sum rounded to Real
//   fn workgroup_total(a: Sum, ids: Ids) -> Sum  the workgroup's sum, uniform (uniform control flow)
//   fn partial_store(i: u32, a: Sum)             partials[i] = a
//   fn partial_load(i: u32) -> Sum               partials[i]
//   fn partial_copy_x_as_y(dst: u32, src: u32)   partials[dst] = (0, partials[src].x, 0, 0)

struct Sum {
    s: vec4<Real>,
}

fn sum_zero() -> Sum {
    return Sum(vec4<Real>(Real(0.0)));
}

fn sum_of(v: vec4<Real>) -> Sum {
    return Sum(v);
}

fn sum_add(a: Sum, v: vec4<Real>) -> Sum {
    return Sum(a.s + v);
}

fn sum_add_x(a: Sum, v: Real) -> Sum {
    var s = a.s;
    s.x = s.x + v;
    return Sum(s);
}

fn sum_merge(a: Sum, b: Sum) -> Sum {
    return Sum(a.s + b.s);
}

fn sum_value(a: Sum) -> vec4<Real> {
    return a.s;
}

fn workgroup_total(a: Sum, ids: Ids) -> Sum {
    return Sum(workgroup_sum(a.s, ids));
}

fn partial_store(i: u32, a: Sum) {
    partials[i] = a.s;
}

fn partial_load(i: u32) -> Sum {
    return Sum(partials[i]);
}

// partials[dst] = (0, partials[src].x, 0, 0) (update_xrp_bicgstab's early stop).
fn partial_copy_x_as_y(dst: u32, src: u32) {
    partials[dst] = vec4<Real>(Real(0.0), partials[src].x, Real(0.0), Real(0.0));
}
