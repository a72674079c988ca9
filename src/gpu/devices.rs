//! Several devices in one process (issue #19): the adapters a distributed solve runs on.

use std::sync::Arc;

use super::device::{GpuContext, WANTED_FEATURES, ranked_adapters};
use crate::base::error::{KrylovError, Result};

/// Which adapters a distributed solve uses: the first `Count(k)` adapters of the ranked list
/// (`krylov info` order), or explicit indices into it. An index may repeat: each occurrence
/// opens a device of its own on that adapter (two logical devices on one GPU, which is how the
/// tests run several devices on lavapipe).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceList {
    Count(usize),
    Indices(Vec<usize>),
}

impl std::str::FromStr for DeviceList {
    type Err = String;

    /// `N` (the first N adapters) or a comma-separated list of adapter indices (`0,1`, `0,0`).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let bad =
            || format!("`{s}` is neither a device count N nor a list of adapter indices like 0,1");
        if s.contains(',') {
            let v: std::result::Result<Vec<usize>, _> =
                s.split(',').map(|t| t.trim().parse::<usize>()).collect();
            return v.map(DeviceList::Indices).map_err(|_| bad());
        }
        match s.trim().parse::<usize>() {
            Ok(0) => Err("--devices needs at least one device".into()),
            Ok(k) => Ok(DeviceList::Count(k)),
            Err(_) => Err(bad()),
        }
    }
}

/// Opens one device per entry of `list` (features as [`GpuContext::new`]: f64, subgroups and
/// timestamps where the adapter has them; the adapter's own limits).
///
/// A count beyond the adapters present is an error that names them and says how to run
/// several logical devices on one adapter.
pub fn open_devices(list: &DeviceList) -> Result<Vec<Arc<GpuContext>>> {
    open_devices_on(list, wgpu::Backends::all())
}

/// The adapters of `backends` [`open_devices_on`] counts (its `--devices N` limit).
pub fn adapter_count(backends: wgpu::Backends) -> usize {
    ranked_adapters(backends).len()
}

/// [`open_devices`] among the adapters of `backends` (ranked and counted as
/// [`super::list_adapters_for`] counts them; the studio passes the primary backends: no GL
/// instance beside its window).
pub fn open_devices_on(
    list: &DeviceList,
    backends: wgpu::Backends,
) -> Result<Vec<Arc<GpuContext>>> {
    let adapters = ranked_adapters(backends);
    if adapters.is_empty() {
        return Err(KrylovError::NoAdapter(String::new()));
    }
    let indices: Vec<usize> = match list {
        DeviceList::Count(k) if *k > adapters.len() => {
            return Err(KrylovError::InvalidOption(format!(
                "--devices {k}: this machine has {} adapter(s) ({}); name one several times \
                 (e.g. --devices 0,0) to run logical devices on it",
                adapters.len(),
                adapters
                    .iter()
                    .enumerate()
                    .map(|(i, a)| format!("{i}: {}", a.get_info().name))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
        DeviceList::Count(k) => (0..*k).collect(),
        DeviceList::Indices(v) => v.clone(),
    };
    if indices.is_empty() {
        return Err(KrylovError::InvalidOption(
            "--devices lists no adapter".into(),
        ));
    }
    indices
        .iter()
        .map(|&i| {
            let adapter = adapters.get(i).cloned().ok_or_else(|| {
                KrylovError::InvalidOption(format!(
                    "--devices: adapter {i} does not exist ({} found; `krylov info` lists them)",
                    adapters.len()
                ))
            })?;
            GpuContext::open_at(adapter, WANTED_FEATURES, i)
        })
        .collect()
}
