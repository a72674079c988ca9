//! The ground floor: the vocabulary every other layer speaks — scalar types, errors, what a
//! solve is asked to do ([`options`]), what it reports ([`report`]) and how it is watched
//! ([`monitor`]). Nothing here imports from `matrix`, `cpu`, `gpu`, `precond` or `solvers`
//! (the layering test `tests/layering.rs` holds every folder of `src/` to its layer).

pub mod batch;
pub mod ca;
pub mod dist;
pub mod error;
pub mod monitor;
pub mod options;
pub mod report;
pub mod scalar;

pub use batch::{BatchReport, BatchSolution, ColumnReport};
pub use ca::{Basis, CaOptions, CaReport, Tsqr};
pub use dist::{DevicePart, DistReport};
pub use error::{KrylovError, MarketErrorKind, Result};
pub use monitor::{ChannelMonitor, FnMonitor, Monitor, Progress};
pub use options::{
    CheckMode, DEFAULT_PADDING_BUDGET, Format, GramSchmidt, Method, OuterPrecision, Precond,
    Reduction, RefineOptions, Refinement, Side, SolveOptions, Trisolve, Variant,
};
pub use report::{
    DeviceInfo, DeviceKind, FormatEstimate, KernelTime, PrecondInfo, RefinementReport, Solution,
    SolveReport, StopReason, WorkCounts,
};
pub use scalar::{Precision, Scalar};
