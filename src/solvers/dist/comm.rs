//! Where the blocks of a distributed solve live, and how the host side of a solve talks to
//! the others: every block in this process ([`Comm::Local`], `--devices`), or one block per
//! MPI rank ([`Comm::Mpi`], feature `mpi`, `mpirun -np N krylov solve --mpi`). The solvers
//! are the same code either way: a phase's halo copies go through [`Comm::exchange`] (host
//! copies, or point-to-point messages), every inner product's sum over the devices through
//! [`Comm::sum`] (nothing to add, or an allreduce), and x comes back through
//! [`Comm::gather`].

use std::ops::Range;

use crate::base::scalar::Scalar;
use crate::matrix::partition::Exchange;

/// The blocks' communicator.
pub(crate) enum Comm {
    /// Every block in this process.
    Local,
    /// One block per rank of the communicator (block = rank).
    #[cfg(feature = "mpi")]
    Mpi(mpi::topology::SimpleCommunicator),
}

impl Comm {
    /// The parts of a `k`-part partition whose blocks live in this process.
    pub(super) fn parts(&self, k: usize) -> Range<usize> {
        match self {
            Comm::Local => 0..k,
            #[cfg(feature = "mpi")]
            Comm::Mpi(world) => {
                use mpi::traits::Communicator;
                let r = world.rank() as usize;
                r..r + 1
            }
        }
    }

    /// Whether blocks live in other processes.
    pub(super) fn is_mpi(&self) -> bool {
        !matches!(self, Comm::Local)
    }

    /// Adds `v` over the processes, in place (every process gets the same sums).
    pub(super) fn sum(&self, v: &mut [f64]) {
        match self {
            Comm::Local => {
                let _ = v;
            }
            #[cfg(feature = "mpi")]
            Comm::Mpi(world) => {
                use mpi::collective::SystemOperation;
                use mpi::traits::CommunicatorCollectives;
                let local = v.to_vec();
                world.all_reduce_into(&local[..], v, SystemOperation::sum());
            }
        }
    }

    /// The halo exchange of one phase: `sent[p − local.start]` holds the entries part p
    /// gathered; every transfer of `plan` into a part of `local` is handed to
    /// `write(to, dst, values)`. Transfers between processes go as messages, in the plan's
    /// order on both sides (MPI keeps the order of messages between two ranks).
    pub(super) fn exchange<T: Scalar>(
        &self,
        plan: &Exchange,
        local: Range<usize>,
        sent: &[Vec<T>],
        mut write: impl FnMut(usize, usize, &[T]),
    ) {
        match self {
            Comm::Local => {
                for tr in &plan.transfers {
                    let from = &sent[tr.from - local.start];
                    write(tr.to, tr.dst, &from[tr.src..tr.src + tr.len]);
                }
            }
            #[cfg(feature = "mpi")]
            Comm::Mpi(world) => {
                use mpi::traits::{Communicator, Destination, Source};
                mpi::request::scope(|scope| {
                    let mut requests = Vec::new();
                    for tr in &plan.transfers {
                        if local.contains(&tr.from) && !local.contains(&tr.to) {
                            let from = &sent[tr.from - local.start];
                            let bytes: &[u8] = bytemuck::cast_slice(&from[tr.src..tr.src + tr.len]);
                            requests.push(
                                world
                                    .process_at_rank(tr.to as i32)
                                    .immediate_send(scope, bytes),
                            );
                        }
                    }
                    for tr in &plan.transfers {
                        if !local.contains(&tr.to) {
                            continue;
                        }
                        if local.contains(&tr.from) {
                            let from = &sent[tr.from - local.start];
                            write(tr.to, tr.dst, &from[tr.src..tr.src + tr.len]);
                        } else {
                            let (bytes, _) =
                                world.process_at_rank(tr.from as i32).receive_vec::<u8>();
                            let values: Vec<T> = bytemuck::pod_collect_to_vec(&bytes);
                            write(tr.to, tr.dst, &values);
                        }
                    }
                    for r in requests {
                        r.wait();
                    }
                });
            }
        }
    }

    /// Every process's `mine` (part p holds `counts[p]` entries), concatenated in part order.
    pub(super) fn gather<T: Scalar>(&self, mine: Vec<T>, counts: &[usize]) -> Vec<T> {
        match self {
            Comm::Local => {
                let _ = counts;
                mine
            }
            #[cfg(feature = "mpi")]
            Comm::Mpi(world) => {
                use mpi::datatype::PartitionMut;
                use mpi::traits::CommunicatorCollectives;
                let size = std::mem::size_of::<T>();
                let bytes: Vec<i32> = counts.iter().map(|&c| (c * size) as i32).collect();
                let displs: Vec<i32> = bytes
                    .iter()
                    .scan(0, |acc, &c| {
                        let d = *acc;
                        *acc += c;
                        Some(d)
                    })
                    .collect();
                let total = bytes.iter().map(|&c| c as usize).sum();
                let mut all = vec![0u8; total];
                let mut part = PartitionMut::new(&mut all[..], &bytes[..], &displs[..]);
                let send: &[u8] = bytemuck::cast_slice(&mine);
                world.all_gather_varcount_into(send, &mut part);
                bytemuck::pod_collect_to_vec(&all)
            }
        }
    }
}
