//! Sparse matrices: CSR storage, COO assembly, Matrix Market I/O and problem generators.

pub mod batch;
mod bcsr;
mod coo;
mod csr;
mod dia;
mod ell;
pub mod equilibrate;
pub mod generators;
pub mod market;
pub mod matching;
pub mod partition;
pub mod rcm;
pub mod reorder;
pub mod samples;
mod sell;
mod stats;
mod system;

pub use bcsr::{BCSR_BLOCK_SIZES, BCSR_MAX_WORKGROUP, Bcsr, block_density};
pub use coo::Coo;
pub use csr::Csr;
pub use dia::Dia;
pub use ell::Ell;
pub use market::{
    read_matrix_market, read_matrix_market_from, read_vector, read_vector_from,
    write_matrix_market, write_matrix_market_to, write_vector, write_vector_to,
};
pub use sell::Sell;
pub use stats::MatrixStats;
pub use system::{check_initial_guess, validate_system};
