//! Double-single ("float-float", double-word) arithmetic: the CPU twin of
//! `shaders/lib/ds.wgsl`, operation for operation, so a GPU result can be compared bit for bit.
//!
//! A [`Ds`] is the unevaluated sum `hi + lo` of two f32 with |lo| ≤ ulp(hi)/2: about 48
//! significant bits (unit round-off u = 2⁻²⁴ of f32, errors in u² = 2⁻⁴⁸ ≈ 3.6·10⁻¹⁵). The
//! algorithms and error bounds are those of Joldes, Muller and Popescu, *Tight and rigorous
//! error bounds for basic building blocks of double-word arithmetic*, ACM TOMS 44(2), 2017
//! ("JMP" below; bounds for round-to-nearest without underflow or overflow):
//!
//! | function | algorithm | relative error |
//! |---|---|---|
//! | [`two_sum`], [`quick_two_sum`] (\|a\| ≥ \|b\|) | Knuth, Dekker (JMP Alg. 1, 2) | exact |
//! | [`two_prod`] | fma or Dekker's product (JMP Alg. 3) | exact |
//! | [`Ds::add`] | AccurateDWPlusDW (JMP Alg. 6) | 3u² + 13u³ |
//! | [`Ds::add_f32`] | DWPlusFP (JMP Alg. 4) | 2u² |
//! | [`Ds::mul_f32`] | DWTimesFP1 (JMP Alg. 7) | 1.5u² + 4u³ |
//! | [`Ds::mul`], [`TwoProd::Fma`] | DWTimesDW3 (JMP Alg. 12) | 5u² (4u², Muller–Rideau 2022) |
//! | [`Ds::mul`], [`TwoProd::Split`] | DWTimesDW1 (JMP Alg. 10) | 7u² |
//! | [`Ds::fma_f32`] | Ds::add of acc and the exact [`two_prod`] | 3u² + 13u³ |
//!
//! Rust's f32 operations are IEEE binary32 with round-to-nearest-even and are never
//! contracted; [`f32::mul_add`] is the fused multiply-add of the [`TwoProd::Fma`] variant.

use crate::base::scalar::TwoProd;

/// Unit round-off of f32: 2⁻²⁴.
pub const U: f64 = 1.0 / 16_777_216.0;

/// A double-single number `hi + lo` (`vec2<f32>(hi, lo)` on the GPU).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Ds {
    pub hi: f32,
    pub lo: f32,
}

impl std::ops::Add for Ds {
    type Output = Ds;
    /// [`Ds::add`].
    fn add(self, b: Ds) -> Ds {
        Ds::add(self, b)
    }
}

impl std::ops::Sub for Ds {
    type Output = Ds;
    /// [`Ds::sub`].
    fn sub(self, b: Ds) -> Ds {
        Ds::sub(self, b)
    }
}

impl std::ops::Neg for Ds {
    type Output = Ds;
    /// [`Ds::neg`].
    fn neg(self) -> Ds {
        Ds::neg(self)
    }
}

/// s + e = a + b exactly, s = fl(a + b) (Knuth's TwoSum, 6 operations, any order of |a|, |b|).
pub fn two_sum(a: f32, b: f32) -> Ds {
    let s = a + b;
    let bb = s - a;
    let e = (a - (s - bb)) + (b - bb);
    Ds { hi: s, lo: e }
}

/// s + e = a + b exactly when |a| ≥ |b| (or a = 0) (Dekker's Fast2Sum, 3 operations).
pub fn quick_two_sum(a: f32, b: f32) -> Ds {
    let s = a + b;
    let e = b - (s - a);
    Ds { hi: s, lo: e }
}

/// a = hi + lo with hi of at most 12 significant bits and |lo| ≤ ulp₁₂(hi)/2 (at most 11
/// bits): hi is a rounded to 12 bits by integer operations on its encoding (adding half of
/// the 12 dropped bits' unit, then clearing them), lo = a − hi is exact (Sterbenz).
///
/// The same halves as Veltkamp's split with C = 2¹² + 1 up to ties, but without its product:
/// `t − (t − a)` with t = C·a breaks when a compiler contracts `C·a − a` into an fma, and C·a
/// overflows for |a| > 2¹¹⁵. This split is exact for every finite |a| < (2 − 2⁻¹²)·2¹²⁷.
pub fn split(a: f32) -> (f32, f32) {
    let hi = f32::from_bits(a.to_bits().wrapping_add(0x800) & 0xffff_f000);
    (hi, a - hi)
}

/// p + e = a·b exactly with the device's fused multiply-add: p = fl(a·b), e = fma(a, b, −p).
/// Exact when |a·b| ≥ 2⁻¹⁰² (e not subnormal) and a·b does not overflow.
pub fn two_prod_fma(a: f32, b: f32) -> Ds {
    let p = a * b;
    Ds {
        hi: p,
        lo: a.mul_add(b, -p),
    }
}

/// p + e = a·b exactly without an fma: Dekker's product of the [`split`] halves. Every
/// partial product has at most 24 bits and is exact, so a compiler that contracts one of them
/// with the following addition into an fma computes the same value; each partial sum is exact
/// by Dekker's argument. Exact when |a·b| ≥ 2⁻¹⁰², no overflow, |a|, |b| < (2 − 2⁻¹²)·2¹²⁷.
pub fn two_prod_split(a: f32, b: f32) -> Ds {
    let p = a * b;
    let (ah, al) = split(a);
    let (bh, bl) = split(b);
    let e = (((ah * bh - p) + ah * bl) + al * bh) + al * bl;
    Ds { hi: p, lo: e }
}

/// p + e = a·b exactly, by `mode`.
pub fn two_prod(a: f32, b: f32, mode: TwoProd) -> Ds {
    match mode {
        TwoProd::Fma => two_prod_fma(a, b),
        TwoProd::Split => two_prod_split(a, b),
    }
}

// `add`, `sub` and `neg` are named after ds.wgsl's `ds_add`, `ds_sub`, `ds_neg` (call sites
// read like the shader); the operators `+`, `-` and unary `-` below are the same functions.
#[allow(clippy::should_implement_trait)]
impl Ds {
    /// The Ds with value `a` (lo = 0).
    pub fn from_f32(a: f32) -> Ds {
        Ds { hi: a, lo: 0.0 }
    }

    /// The nearest Ds to `x` for |x| in f32's normal range: hi = fl₃₂(x), lo = fl₃₂(x − hi)
    /// (relative error ≤ u²).
    pub fn from_f64(x: f64) -> Ds {
        let hi = x as f32;
        Ds {
            hi,
            lo: (x - hi as f64) as f32,
        }
    }

    /// hi + lo in f64 (exact: 48 bits fit in 53).
    pub fn to_f64(self) -> f64 {
        self.hi as f64 + self.lo as f64
    }

    /// −a (exact).
    pub fn neg(self) -> Ds {
        Ds {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    /// a + b, AccurateDWPlusDW (JMP Alg. 6): relative error ≤ 3u² + 13u³, also under
    /// cancellation (the "IEEE" addition of QD, not the sloppy one).
    pub fn add(self, b: Ds) -> Ds {
        let s = two_sum(self.hi, b.hi);
        let t = two_sum(self.lo, b.lo);
        let c = s.lo + t.hi;
        let v = quick_two_sum(s.hi, c);
        let w = t.lo + v.lo;
        quick_two_sum(v.hi, w)
    }

    /// a − b = a + (−b): as [`Ds::add`].
    pub fn sub(self, b: Ds) -> Ds {
        self.add(b.neg())
    }

    /// a + b for an f32 b, DWPlusFP (JMP Alg. 4): relative error ≤ 2u².
    pub fn add_f32(self, b: f32) -> Ds {
        let s = two_sum(self.hi, b);
        let v = self.lo + s.lo;
        quick_two_sum(s.hi, v)
    }

    /// a·b for an f32 b, DWTimesFP1 (JMP Alg. 7): relative error ≤ 1.5u² + 4u³.
    pub fn mul_f32(self, b: f32, mode: TwoProd) -> Ds {
        let c = two_prod(self.hi, b, mode);
        let cl2 = self.lo * b;
        let t = quick_two_sum(c.hi, cl2);
        let tl2 = t.lo + c.lo;
        quick_two_sum(t.hi, tl2)
    }

    /// a·b. With [`TwoProd::Fma`] DWTimesDW3 (JMP Alg. 12; relative error ≤ 5u², shown ≤ 4u²
    /// by Muller and Rideau 2022); with [`TwoProd::Split`] DWTimesDW1 (JMP Alg. 10, ≤ 7u²).
    pub fn mul(self, b: Ds, mode: TwoProd) -> Ds {
        match mode {
            TwoProd::Fma => {
                let c = two_prod_fma(self.hi, b.hi);
                let tl0 = self.lo * b.lo;
                let tl1 = self.hi.mul_add(b.lo, tl0);
                let cl2 = self.lo.mul_add(b.hi, tl1);
                let cl3 = c.lo + cl2;
                quick_two_sum(c.hi, cl3)
            }
            TwoProd::Split => {
                let c = two_prod_split(self.hi, b.hi);
                let tl1 = self.hi * b.lo;
                let tl2 = self.lo * b.hi;
                let cl2 = tl1 + tl2;
                let cl3 = c.lo + cl2;
                quick_two_sum(c.hi, cl3)
            }
        }
    }

    /// acc + a·b with the product exact ([`two_prod`]) and one [`Ds::add`]: relative error
    /// ≤ 3u² + 13u³ of the exact acc + a·b. The step of a double-single dot product.
    pub fn fma_f32(self, a: f32, b: f32, mode: TwoProd) -> Ds {
        self.add(two_prod(a, b, mode))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    const MODES: [TwoProd; 2] = [TwoProd::Fma, TwoProd::Split];

    /// |got − exact| ≤ k·u²·|exact| + 4 subnormal ulps (2⁻¹⁴⁷: for results whose low word
    /// underflows, where the error becomes absolute). NaN fails.
    fn assert_rel(got: Ds, exact: f64, k: f64, what: &str) {
        let err = (got.to_f64() - exact).abs();
        let bound = k * U * U * exact.abs() + 2f64.powi(-147);
        assert!(
            err <= bound,
            "{what}: got {got:?} = {:e}, exact {exact:e}, error {err:e} > {bound:e} ({:.2} u²)",
            got.to_f64(),
            err / (U * U * exact.abs())
        );
        // The result is normalised: |lo| ≤ ulp(hi)/2, i.e. hi = fl(hi + lo).
        assert_eq!(got.hi, got.hi + got.lo, "{what}: {got:?} not normalised");
    }

    /// A random normalised Ds with exponent in [−e, e] (powers of two) and a random sign.
    fn random_ds(rng: &mut impl Rng, e: i32) -> Ds {
        let m: f64 = rng.random_range(1.0..2.0);
        let x = m * 2f64.powi(rng.random_range(-e..=e)) * if rng.random() { 1.0 } else { -1.0 };
        Ds::from_f64(x + x * rng.random_range(-1e-9..1e-9))
    }

    fn random_f32(rng: &mut impl Rng, e: i32) -> f32 {
        random_ds(rng, e).hi
    }

    #[test]
    fn error_free_transformations_are_exact() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(15);
        for _ in 0..20_000 {
            let (a, b) = (random_f32(&mut rng, 40), random_f32(&mut rng, 40));
            let s = two_sum(a, b);
            assert_eq!(s.to_f64(), a as f64 + b as f64, "two_sum({a:e}, {b:e})");
            assert_eq!(s.hi, a + b);
            let (big, small) = if a.abs() >= b.abs() { (a, b) } else { (b, a) };
            assert_eq!(
                quick_two_sum(big, small),
                s,
                "quick_two_sum({big:e}, {small:e})"
            );
            for mode in MODES {
                let p = two_prod(a, b, mode);
                assert_eq!(
                    p.to_f64(),
                    a as f64 * b as f64,
                    "two_prod {mode:?}({a:e}, {b:e})"
                );
                assert_eq!(p.hi, a * b);
            }
            let (h, l) = split(a);
            assert_eq!(h + l, a);
            assert!(h.to_bits() & 0xfff == 0, "hi has at most 12 bits");
            assert!(l.abs() <= (h.abs() * 2f32.powi(-12)).max(a.abs() * 2f32.powi(-12)));
        }
    }

    #[test]
    fn two_prod_is_exact_on_edge_significands() {
        // Products whose error needs all 24 bits, from every binade pattern of the low halves,
        // including the largest significands (hi rounds up to the next power of two).
        let edge = [
            1.0f32,
            f32::from_bits(0x3f80_0001),
            f32::from_bits(0x3fff_ffff),
            f32::from_bits(0x3fff_f800),
            f32::from_bits(0x3fff_f7ff),
            f32::from_bits(0x3f80_07ff),
            f32::from_bits(0x3f80_0800),
            f32::from_bits(0x3f80_0fff),
            f32::from_bits(0x3fc0_0fff),
            f32::from_bits(0x3faa_aaab),
            16_777_215.0,
            4097.0,
            1.0e30,
            3.0e38,
            1.0e-18,
        ];
        for &a in &edge {
            for &b in &edge {
                for (a, b) in [(a, b), (-a, b), (a, -b)] {
                    let exact = a as f64 * b as f64;
                    if exact.abs() > f32::MAX as f64 || exact.abs() < 2f64.powi(-102) {
                        continue;
                    }
                    for mode in MODES {
                        assert_eq!(two_prod(a, b, mode).to_f64(), exact, "{mode:?} {a:e}·{b:e}");
                    }
                }
            }
        }
        // The split of the largest splittable values stays finite.
        let (h, l) = split(f32::from_bits(0x7f7f_f7ff));
        assert!(h.is_finite() && l.is_finite());
    }

    #[test]
    fn double_single_operations_meet_their_bounds_on_random_inputs() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(44);
        for _ in 0..20_000 {
            let (x, y) = (random_ds(&mut rng, 30), random_ds(&mut rng, 30));
            let c = random_f32(&mut rng, 30);
            let (xf, yf) = (x.to_f64(), y.to_f64());
            assert_rel(x.add(y), xf + yf, 3.0 + 13.0 * U, "add");
            assert_rel(x.sub(y), xf - yf, 3.0 + 13.0 * U, "sub");
            assert_rel(x.add_f32(c), xf + c as f64, 2.0, "add_f32");
            for mode in MODES {
                // x·c and x·y are not exact in f64 (48 × 24 and 48 × 48 bits): compare with
                // the f64 product, whose own error (≤ 2⁻⁵³ ≈ 0.03 u²) the bound absorbs.
                assert_rel(x.mul_f32(c, mode), xf * c as f64, 1.5 + 0.1, "mul_f32");
                let k = if mode == TwoProd::Fma { 5.0 } else { 7.0 };
                assert_rel(x.mul(y, mode), xf * yf, k + 0.1, "mul");
                let (a, b) = (random_f32(&mut rng, 15), random_f32(&mut rng, 15));
                assert_rel(
                    x.fma_f32(a, b, mode),
                    xf + a as f64 * b as f64,
                    3.01,
                    "fma_f32",
                );
            }
        }
    }

    #[test]
    fn catastrophic_cancellation_keeps_the_low_word() {
        for k in [1, 10, 20, 23, 24, 30, 40, 47] {
            let a = Ds::from_f64(1.0 + 2f64.powi(-30));
            let b = Ds::from_f64(-(1.0 + 2f64.powi(-30)) * (1.0 + 2f64.powi(-k)));
            let exact = a.to_f64() + b.to_f64();
            // The sum of two Ds is exact here (both operands share the exponent).
            assert_rel(a.add(b), exact, 3.0, "a + (−a(1 + 2^−k))");
            assert!(a.add(b).to_f64() != 0.0);
            // a + f32: 1 + 2⁻³⁰ (a Ds) − 1 leaves exactly 2⁻³⁰, which f32 alone loses.
            assert_eq!(a.add_f32(-1.0).to_f64(), 2f64.powi(-30));
            // An exact product cancelled by its rounded value leaves the rounding error.
            let x = 1.0 + 2f32.powi(-k.min(23));
            for mode in MODES {
                let r = Ds::from_f32(-(x * x)).fma_f32(x, x, mode);
                assert_eq!(r.to_f64(), x as f64 * x as f64 - (x * x) as f64, "{mode:?}");
            }
        }
    }

    #[test]
    fn large_exponent_spread() {
        for (a, b) in [
            (1e30f64, 1e-30f64),
            (1e-30, 1e30),
            (3e38, 1e-38),
            (1.0, 1e-20),
        ] {
            let (x, y) = (Ds::from_f64(a), Ds::from_f64(b));
            let exact = x.to_f64() + y.to_f64();
            assert_rel(x.add(y), exact, 3.0, "add spread");
            assert_rel(
                x.add_f32(y.hi),
                x.to_f64() + y.hi as f64,
                2.0,
                "add_f32 spread",
            );
            for mode in MODES {
                if a * b < 1e30 {
                    assert_rel(x.mul(y, mode), x.to_f64() * y.to_f64(), 7.1, "mul spread");
                }
            }
        }
        // 1 + 2⁻⁴⁰: beyond f32, within Ds.
        let one = Ds::from_f32(1.0).add(Ds::from_f64(2f64.powi(-40)));
        assert_eq!(one.to_f64(), 1.0 + 2f64.powi(-40));
    }

    #[test]
    fn small_and_subnormal_ish_values() {
        // Near the bottom of the normal range the low word underflows: the error is then
        // absolute (≤ the smallest normal · u), never a NaN or a sign flip.
        let tiny = f32::MIN_POSITIVE;
        for mode in MODES {
            for (a, b) in [
                (tiny * 8.0, 1.5f32),
                (1e-20, 1e-18),
                (3e-39, 0.75),
                (1e-30, 1e-9),
            ] {
                let p = two_prod(a, b, mode);
                assert!(!p.hi.is_nan() && !p.lo.is_nan());
                let exact = a as f64 * b as f64;
                let err = (p.to_f64() - exact).abs();
                assert!(
                    err <= 4.0 * tiny as f64 * U + exact.abs() * U * U,
                    "{mode:?} {a:e}·{b:e}: {p:?} error {err:e}"
                );
                let acc = Ds::from_f32(tiny).fma_f32(a, b, mode);
                assert_rel(acc, tiny as f64 + exact, 3.0, "fma_f32 tiny");
            }
        }
        let x = Ds::from_f64(1e-37).add(Ds::from_f64(-0.9999999e-37));
        assert!(x.to_f64() > 0.0 && x.to_f64() < 1e-43);
    }

    #[test]
    fn products_whose_low_part_matters() {
        // (1 + 2⁻¹²)² = 1 + 2⁻¹¹ + 2⁻²⁴: the 2⁻²⁴ is lost in f32 but kept by Ds.
        let x = 1.0 + 2f32.powi(-12);
        for mode in MODES {
            let p = Ds::from_f32(x).mul_f32(x, mode);
            assert_eq!(
                p.to_f64(),
                1.0 + 2f64.powi(-11) + 2f64.powi(-24),
                "{mode:?}"
            );
            let q = Ds::from_f32(x).mul(Ds::from_f32(x), mode);
            assert_eq!(q, p, "{mode:?}");
            // Ds · Ds with low words: (1 + 2⁻³⁰)(1 − 2⁻³⁰) = 1 − 2⁻⁶⁰ rounds to 1 in Ds.
            let a = Ds::from_f64(1.0 + 2f64.powi(-30));
            let b = Ds::from_f64(1.0 - 2f64.powi(-30));
            assert_rel(a.mul(b, mode), 1.0 - 2f64.powi(-60), 7.0, "mul low words");
        }
    }

    #[test]
    fn nan_and_infinity_propagate() {
        for mode in MODES {
            assert!(Ds::from_f32(f32::NAN).add(Ds::from_f32(1.0)).hi.is_nan());
            assert!(Ds::from_f32(1.0).fma_f32(f32::NAN, 2.0, mode).hi.is_nan());
            assert!(
                Ds::from_f32(2.0)
                    .mul(Ds::from_f32(f32::NAN), mode)
                    .hi
                    .is_nan()
            );
            assert!(!two_prod(f32::INFINITY, 2.0, mode).to_f64().is_finite());
            assert!(
                !Ds::from_f32(f32::MAX)
                    .add_f32(f32::MAX)
                    .to_f64()
                    .is_finite()
            );
        }
    }

    #[test]
    fn conversions_round_trip() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        for _ in 0..1000 {
            let x: f64 = rng.random_range(-1e6..1e6);
            let d = Ds::from_f64(x);
            assert!((d.to_f64() - x).abs() <= U * U * x.abs());
            assert_eq!(d.hi, d.hi + d.lo);
            assert_eq!(d.neg().to_f64(), -d.to_f64());
            assert_eq!(d + d, d.add(d));
            assert_eq!(d - d, d.sub(d));
            assert_eq!(-d, d.neg());
        }
    }
}
