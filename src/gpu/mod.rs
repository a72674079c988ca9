//! The GPU layer: device selection, buffers, pipelines and the accounting of every dispatch
//! and transfer.
