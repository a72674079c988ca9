//! The floating-point types the solvers run in.

use num_traits::Float;

/// Precision of a computation, as named on the command line and in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    F32,
    F64,
}

impl Precision {
    /// Bytes per value.
    pub fn size(self) -> usize {
        match self {
            Precision::F32 => 4,
            Precision::F64 => 8,
        }
    }

    /// The WGSL type name (`f32` or `f64`).
    pub fn wgsl(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }

    /// Unit round-off of the type.
    pub fn epsilon(self) -> f64 {
        match self {
            Precision::F32 => f32::EPSILON as f64,
            Precision::F64 => f64::EPSILON,
        }
    }
}

impl std::fmt::Display for Precision {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.wgsl())
    }
}

impl std::str::FromStr for Precision {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "f32" => Ok(Precision::F32),
            "f64" => Ok(Precision::F64),
            _ => Err(format!("unknown precision `{s}` (expected f32 or f64)")),
        }
    }
}

/// A real scalar the library computes in: `f32` or `f64`.
///
/// ```
/// use krylov_wgpu::Scalar;
/// assert_eq!(<f32 as Scalar>::PRECISION.wgsl(), "f32");
/// assert_eq!(<f64 as Scalar>::from_f64(0.5), 0.5);
/// assert_eq!(1.5f32.as_f64(), 1.5);
/// ```
pub trait Scalar:
    Float
    + num_traits::NumAssign
    + std::iter::Sum
    + bytemuck::Pod
    + Default
    + Send
    + Sync
    + std::fmt::Debug
    + std::fmt::Display
    + std::fmt::LowerExp
    + 'static
{
    /// The matching [`Precision`].
    const PRECISION: Precision;
    /// Converts from `f64` (rounding for `f32`).
    fn from_f64(v: f64) -> Self;
    /// Converts to `f64` exactly (named `as_f64` to avoid `num_traits::ToPrimitive::to_f64`).
    fn as_f64(self) -> f64;
}

impl Scalar for f32 {
    const PRECISION: Precision = Precision::F32;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn as_f64(self) -> f64 {
        self as f64
    }
}

impl Scalar for f64 {
    const PRECISION: Precision = Precision::F64;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn as_f64(self) -> f64 {
        self
    }
}

/// How double-single ("float-float") arithmetic forms the exact error of an f32 product
/// (`two_prod` in `shaders/lib/ds.wgsl` and `cpu::ds`): with a fused multiply-add where the
/// device's `fma` is exact, otherwise with Dekker's product of split halves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TwoProd {
    /// p = a·b, e = fma(a, b, −p): 2 operations, needs an fma with one rounding.
    Fma,
    /// Dekker's product on 12-bit halves: 11 f32 and 4 integer operations, exact with any
    /// f32 arithmetic (contracted or not).
    Split,
}
