//! Preconditioners.
