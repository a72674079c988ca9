//! Sparse matrices: CSR storage, COO assembly, Matrix Market I/O and problem generators.

mod coo;
mod csr;
mod ell;
pub mod generators;
pub mod market;

pub use coo::Coo;
pub use csr::Csr;
pub use ell::Ell;
pub use market::{
    read_matrix_market, read_matrix_market_from, read_vector, read_vector_from,
    write_matrix_market, write_matrix_market_to, write_vector, write_vector_to,
};
