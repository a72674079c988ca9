//! The one error type of the library.
//!
//! Every fallible operation returns [`Result<T>`]; the CLI prints the error's `Display` on one line.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = KrylovError> = std::result::Result<T, E>;

/// What went wrong while parsing a Matrix Market file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarketErrorKind {
    #[error(
        "missing or malformed banner (expected `%%MatrixMarket matrix <format> <field> <symmetry>`)"
    )]
    BadBanner,
    #[error("unsupported {what} `{value}`")]
    Unsupported { what: &'static str, value: String },
    #[error("complex matrices are not supported")]
    Complex,
    #[error("malformed size line: {0}")]
    BadSizeLine(String),
    #[error("non-numeric token `{0}`")]
    NotANumber(String),
    #[error("non-finite value `{0}`")]
    NonFinite(String),
    #[error("{what} index {index} out of range 1..={max}")]
    IndexOutOfRange {
        what: &'static str,
        index: i64,
        max: usize,
    },
    #[error("expected {expected} tokens on the entry line, found {found}")]
    WrongTokenCount { expected: usize, found: usize },
    #[error("file ends after {found} of {expected} entries (truncated)")]
    Truncated { expected: usize, found: usize },
    #[error("more entries than the {expected} announced in the size line")]
    TooManyEntries { expected: usize },
    #[error("{0}")]
    Invalid(String),
}

/// The library's typed error.
#[derive(Debug, thiserror::Error)]
pub enum KrylovError {
    /// An I/O error with the path that caused it.
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A Matrix Market file could not be parsed; `line` is 1-based.
    #[error("{path}:{line}: {kind}")]
    MatrixMarket {
        path: String,
        line: usize,
        kind: MarketErrorKind,
    },
    /// An operation needs a square matrix.
    #[error("matrix is not square ({rows} x {cols})")]
    NotSquare { rows: usize, cols: usize },
    /// Two operands have incompatible sizes.
    #[error("dimension mismatch: {what} (expected {expected}, found {found})")]
    DimensionMismatch {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// The CSR arrays are inconsistent.
    #[error("invalid matrix: {0}")]
    InvalidMatrix(String),
    /// A NaN or infinity was found in an input.
    #[error("non-finite value in {what} at index {index}")]
    NonFinite { what: &'static str, index: usize },
    /// Jacobi preconditioning or iteration needs a non-zero diagonal.
    #[error("zero diagonal entry at row {row}: Jacobi is undefined")]
    ZeroDiagonal { row: usize },
    /// A storage format does not suit the matrix (padding over the budget, too many
    /// diagonals, storage over the adapter's limits).
    #[error("format {format} refused: {reason}")]
    FormatRefused { format: String, reason: String },
    /// An option value is not valid for this call.
    #[error("invalid option: {0}")]
    InvalidOption(String),
    /// The method does not apply to the matrix (e.g. CG on a nonsymmetric matrix).
    #[error("{0}")]
    MethodMismatch(String),
    /// No GPU adapter could be found.
    #[error("no GPU adapter found{0}")]
    NoAdapter(String),
    /// `--device gpu`: adapters exist but none has what the request needs.
    #[error(
        "no GPU adapter has {needs} (seen: {seen}); use --device cpu or --device auto (for f64: --precision mixed, or --allow-mixed, refines f32 solves to f64 accuracy on the GPU)"
    )]
    NoUsableAdapter { needs: &'static str, seen: String },
    /// The adapter lacks a feature the request needs.
    #[error("adapter `{adapter}` does not support {feature}")]
    MissingFeature {
        adapter: String,
        feature: &'static str,
    },
    /// A buffer would exceed a device limit.
    #[error("{what} needs {bytes} bytes, over the adapter's {limit_name} of {limit} bytes")]
    BufferTooLarge {
        what: String,
        bytes: u64,
        limit: u64,
        limit_name: &'static str,
    },
    /// The GPU device reported an error (validation, out of memory, lost device).
    #[error("GPU error: {0}")]
    Gpu(String),
    /// The requested combination is not implemented (yet) on this device.
    #[error("not supported: {0}")]
    Unsupported(String),
}

impl KrylovError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        KrylovError::Io {
            path: path.into(),
            source,
        }
    }
}
