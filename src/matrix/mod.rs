//! Sparse matrices: CSR storage, COO assembly, Matrix Market I/O and problem generators.

mod coo;
mod csr;
pub mod generators;
pub mod market;

pub use coo::Coo;
pub use csr::Csr;
