//! Solver options and reports shared by every back end, and the GPU solvers.

mod options;
mod report;

pub use options::{GramSchmidt, Method, Precond, SolveOptions, Variant, validate_system};
pub use report::{Solution, SolveReport, StopReason, WorkCounts};
