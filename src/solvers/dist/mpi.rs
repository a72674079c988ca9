//! One GPU per MPI rank (issue #19, feature `mpi`): the distributed solvers of this module's
//! parent with block p on rank p. Every rank holds A and b on the host (it reads or generates
//! the same system) and builds the same partition and exchange plan; only its own block goes
//! to its device. Halos travel as point-to-point messages between the ranks that share them,
//! every inner product is an allreduce of the ranks' partial sums, and x is gathered to every
//! rank for the true residual (each rank adds its own rows' squares, then an allreduce: every
//! rank takes the same decisions). Every rank returns the same solution and report; the CLI
//! prints it from rank 0.
//!
//! ```no_run
//! # #[cfg(feature = "mpi")] {
//! use krylov_wgpu::gpu::{DeviceList, open_devices_on};
//! use krylov_wgpu::matrix::generators;
//! use krylov_wgpu::solvers::{SolveOptions, dist::mpi::{local_adapter, solve_mpi}};
//! let universe = mpi::initialize().expect("MPI");
//! let world = universe.world();
//! let a = generators::poisson_2d_fd::<f32>(64);
//! let b = vec![1.0f32; a.nrows()];
//! let list = DeviceList::Indices(vec![local_adapter()?]);
//! let device = open_devices_on(&list, wgpu::Backends::PRIMARY)?.remove(0);
//! let sol = solve_mpi(&world, device, &a, &b, None, &SolveOptions::default(), &mut ())?;
//! assert!(sol.report.converged);
//! # }
//! # Ok::<(), krylov_wgpu::KrylovError>(())
//! ```

use std::sync::Arc;

use mpi::topology::SimpleCommunicator;
use mpi::traits::Communicator;

use super::{Comm, DistConfig, solve_blocks};
use crate::base::error::Result;
use crate::base::scalar::Scalar;
use crate::base::{Monitor, Solution};
use crate::gpu::GpuContext;
use crate::matrix::Csr;
use crate::solvers::SolveOptions;

/// Solves A x = b with block `rank` of `world.size()` on `device` (CG, BiCGStab, GMRES or CA-GMRES, as
/// [`super::solve_dist`]). Call it on every rank with the same system and options.
pub fn solve_mpi<T: Scalar>(
    world: &SimpleCommunicator,
    device: Arc<GpuContext>,
    a: &Csr<T>,
    b: &[T],
    x0: Option<&[T]>,
    opts: &SolveOptions,
    monitor: &mut dyn Monitor,
) -> Result<Solution<T>> {
    let k = world.size() as usize;
    let comm = Comm::Mpi(world.duplicate());
    solve_blocks(
        &[device],
        comm,
        k,
        a,
        b,
        x0,
        opts,
        &DistConfig::default(),
        monitor,
    )
}

/// The adapter this rank drives, among the primary backends' adapters (Vulkan, Metal, DX12:
/// GL would list the same GPUs again, without f64): its rank among the ranks on its machine
/// (Open MPI's `OMPI_COMM_WORLD_LOCAL_RANK`, or MPICH's `MPI_LOCALRANKID`) modulo the
/// adapters present, so `mpirun -np 2` on a two-GPU machine puts one rank on each GPU, and
/// on a one-GPU machine both on the same one. Open it with
/// [`open_devices_on`](crate::gpu::open_devices_on) and `wgpu::Backends::PRIMARY`.
pub fn local_adapter() -> Result<usize> {
    let local = ["OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID"]
        .iter()
        .find_map(|v| std::env::var(v).ok()?.parse::<usize>().ok())
        .unwrap_or(0);
    let adapters = crate::gpu::adapter_count(wgpu::Backends::PRIMARY).max(1);
    Ok(local % adapters)
}
