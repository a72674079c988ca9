//! What a distributed solve (several devices, issue #19) adds to its [`SolveReport`]
//! (`devices` in the JSON).
//!
//! [`SolveReport`]: super::SolveReport

/// One device's row block and its share of the work.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DevicePart {
    /// The adapter's name and its index in the ranked list (`krylov info`).
    pub adapter: String,
    pub adapter_index: usize,
    /// First global row and number of rows owned.
    pub first_row: usize,
    pub rows: usize,
    /// Rows whose product reads no halo entry (run while the halo is in flight).
    pub interior_rows: usize,
    pub nnz: usize,
    /// Remote entries of the vector this block reads each product.
    pub halo: usize,
    /// Own entries other blocks read (what it sends each product).
    pub send: usize,
    /// Whether the block's column indices and values went over two storage bindings.
    pub split_binding: bool,
    /// Host time spent waiting for this device's reads in the loop.
    pub wait_seconds: f64,
    /// GPU time per kernel on this device (timestamps, with `KRYLOV_PROFILE=1` or
    /// `Tuning::profile`; empty otherwise).
    pub kernel_times: Vec<super::KernelTime>,
}

/// The distributed solve: partition, exchange and where the loop's time went. The host
/// times (`exchange_seconds`, `wait_seconds`, `submit_seconds`, `queue_submit_seconds`, each
/// device's `wait_seconds`) count the solve loops only, as the report's `loop_seconds` does.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DistReport {
    pub partition: String,
    pub devices: Vec<DevicePart>,
    /// Halo values moved per iteration (each read back from its owner once and written to
    /// its reader once), and the bytes that is through the host.
    pub exchange_values_per_iteration: usize,
    pub exchange_bytes_per_iteration: u64,
    /// Host time in the exchange proper (copying halos between the devices' staging and
    /// queues), not counting the waits for the reads that bring them.
    pub exchange_seconds: f64,
    /// `exchange_seconds` over the loop's wall time.
    pub exchange_share: f64,
    /// Host time waiting for the halo reads (the update and gather on every device) and for
    /// the partial sums (the boundary product): the loop's synchronisation.
    pub wait_seconds: f64,
    /// Host round trips per iteration summed over devices divided by devices: 2 with a halo
    /// (halo, then inner products), 1 without.
    pub syncs_per_iteration_per_device: f64,
    /// Host time recording and submitting the loop's batches (every device, one thread):
    /// with `wait_seconds` (per device) and `exchange_seconds`, where the host's loop goes.
    pub submit_seconds: f64,
    /// Of `submit_seconds`, the time inside wgpu's `CommandEncoder::finish` and
    /// `Queue::submit` (the rest is recording the batches and queuing their reads).
    pub queue_submit_seconds: f64,
}
