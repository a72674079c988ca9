//! Host side of `shaders/lib/format_*.wgsl`: a sparse matrix resident on the GPU in one of
//! the storage formats, and the automatic choice among them.
//!
//! Every kernel that multiplies by a matrix is written once against the interface of
//! `shaders/lib/spmv_row.wgsl`; the host compiles it with the format's library and binds the
//! matrix at 20–24 ([`GpuMatrix::bindings`]), 25–29 for a second matrix (BiCG's Aᵀ). So every
//! solver runs on every format unchanged.

use std::marker::PhantomData;

use super::engine::Engine;
use super::shader::{FormatKernel, MAX_CSR_PARTS, ShaderConfig, csr_part_bindings};
use crate::base::Format;
use crate::base::error::{KrylovError, Result};
use crate::base::scalar::Scalar;
use crate::matrix::{Bcsr, Csr, Dia, Ell, Sell};

pub use super::format_rule::{
    FormatChoice, RuleTarget, choose_format, choose_format_for, choose_from_stats, format_estimates,
};
pub use crate::base::options::DEFAULT_PADDING_BUDGET;
pub use crate::base::report::FormatEstimate;

/// Mirrors `struct MatInfo` of `shaders/lib/spmv_row.wgsl`.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct MatInfo {
    rows: u32,
    cols: u32,
    width: u32,
    passes: u32,
    /// Entries per binding of a split CSR: part k from entry k·split (`u32::MAX` otherwise).
    split: u32,
    pad: [u32; 3],
}

/// A sparse matrix uploaded to the GPU in one storage format.
///
/// ```no_run
/// use krylov_wgpu::gpu::{DeviceRequest, Engine, GpuContext, GpuMatrix};
/// use krylov_wgpu::matrix::generators::poisson_2d_fd;
/// use krylov_wgpu::solvers::Format;
/// let engine = Engine::new(GpuContext::new(&DeviceRequest::from_env())?);
/// let a = poisson_2d_fd::<f32>(64);
/// let m = GpuMatrix::upload(&engine, &a, Format::Dia)?;
/// assert_eq!(m.format(), Format::Dia);
/// assert!(m.bytes() < 6 * 4 * a.nrows() as u64);
/// # Ok::<(), krylov_wgpu::KrylovError>(())
/// ```
#[derive(Debug, Clone)]
pub struct GpuMatrix<T> {
    pub nrows: usize,
    pub ncols: usize,
    pub nnz: usize,
    format: Format,
    kernel: FormatKernel,
    info: wgpu::Buffer,
    arrays: Vec<wgpu::Buffer>,
    /// A split CSR's column indices and values of parts 1, 2, … (part k from entry
    /// k·`split`), a pair per part ([`csr_part_bindings`]).
    high: Vec<wgpu::Buffer>,
    split: Option<usize>,
    passes: u32,
    bytes: u64,
    stored: u64,
    /// Kernels of solves on this matrix reduce with error terms ([`Self::with_compensated`]).
    compensated: bool,
    _t: PhantomData<T>,
}

fn refused(format: Format, e: KrylovError) -> KrylovError {
    match e {
        KrylovError::InvalidOption(reason) => KrylovError::FormatRefused {
            format: format.as_str().into(),
            reason,
        },
        other => other,
    }
}

/// Block size of a BCSR format.
pub fn bcsr_block(format: Format) -> Option<usize> {
    match format {
        Format::Bcsr1 => Some(1),
        Format::Bcsr2 => Some(2),
        Format::Bcsr4 => Some(4),
        Format::Bcsr8 => Some(8),
        _ => None,
    }
}

/// Paper 003 §3.6: blocks processed together per block row (`Bx`). Start at 1 (pure MBR) and
/// double while the matrix gives fewer chunks than `target_chunks` workgroups — a small
/// matrix in MBR mapping occupies too few workgroups — and block rows are long enough that
/// the wider step does not just add padding. (`KRYLOV_BCSR_BX` overrides it at upload.)
pub fn choose_bx(nrows: usize, nnz_blocks: usize, n_block: usize, wg: usize) -> usize {
    const TARGET_CHUNKS: usize = 512;
    let nbr = nrows.div_ceil(n_block).max(1);
    let mean_blocks = nnz_blocks as f64 / nbr as f64;
    let mut bx = 1;
    while 2 * bx * n_block * n_block <= wg {
        let by = wg / (bx * n_block * n_block);
        if nbr.div_ceil(by) >= TARGET_CHUNKS || mean_blocks < (2 * bx) as f64 {
            break;
        }
        bx *= 2;
    }
    bx
}

/// The `Bx` an upload of `a` in N×N blocks uses with workgroups of `wg` threads:
/// [`choose_bx`] on the matrix's block count, or `KRYLOV_BCSR_BX` when set to a power of two
/// that fits.
pub fn bcsr_bx<T: Scalar>(a: &Csr<T>, nb: usize, wg: usize) -> usize {
    let density = crate::matrix::block_density(a, nb);
    let blocks = if density > 0.0 {
        (a.nnz() as f64 / (density * (nb * nb) as f64)).round() as usize
    } else {
        0
    };
    std::env::var("KRYLOV_BCSR_BX")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|b| b.is_power_of_two() && b * nb * nb <= wg)
        .unwrap_or_else(|| choose_bx(a.nrows(), blocks, nb, wg))
}

/// SELL-C-σ slice height for this device: its subgroup size (threads of one slice then
/// run in lockstep), 32 when unknown.
pub fn sell_c(engine: &Engine) -> usize {
    let s = engine.context().summary.subgroup_min_size;
    if (4..=128).contains(&s) && s.is_power_of_two() {
        s as usize
    } else {
        32
    }
}

impl<T: Scalar> GpuMatrix<T> {
    /// Converts `a` to `format` and uploads it, with [`DEFAULT_PADDING_BUDGET`];
    /// `Format::Auto` chooses first ([`choose_format`]).
    pub fn upload(engine: &Engine, a: &Csr<T>, format: Format) -> Result<Self> {
        Self::upload_with(engine, a, format, DEFAULT_PADDING_BUDGET)
    }

    /// Converts and uploads with an explicit padding budget. Refusals are
    /// [`KrylovError::FormatRefused`] (padding over `max_padding`) or
    /// [`KrylovError::BufferTooLarge`] (an array over the adapter's binding limit).
    pub fn upload_with(
        engine: &Engine,
        a: &Csr<T>,
        format: Format,
        max_padding: f64,
    ) -> Result<Self> {
        engine.context().require(T::PRECISION)?;
        let format = if format == Format::Auto {
            choose_format_for(a, max_padding, RuleTarget::of(engine.context())).format
        } else {
            format
        };
        let wg = engine.tuning().workgroup_size as usize;
        let n = a.nrows();
        let row_passes = n.div_ceil(wg) as u32;
        // (kernel, arrays, width, passes, stored values including padding)
        let mut high = Vec::new();
        let mut split = None;
        let (kernel, arrays, width, passes, stored) = match format {
            Format::Csr | Format::Auto => {
                // Column indices and values larger than one binding go over as many as they
                // need (issue #16: no size refused), split at the same entries.
                let limit = engine.binding_limit() as usize;
                let per = (limit / size_of::<T>().max(4)).max(1);
                let nnz = a.nnz();
                let parts = nnz.div_ceil(per).max(1);
                let kernel = if parts > 1 {
                    let most = csr_max_parts(engine);
                    if parts > most as usize {
                        return Err(KrylovError::BufferTooLarge {
                            what: format!("csr values (over {most} bindings)"),
                            bytes: (nnz * size_of::<T>()) as u64,
                            limit: most as u64 * (per * size_of::<T>()) as u64,
                            limit_name: "the storage bindings a kernel can hold",
                        });
                    }
                    split = Some(per);
                    for k in 1..parts {
                        let r = k * per..((k + 1) * per).min(nnz);
                        high.push(engine.storage_from(
                            &format!("csr.col_idx (binding {} of {parts})", k + 1),
                            &a.col_idx()[r.clone()],
                        )?);
                        high.push(engine.storage_from(
                            &format!("csr.values (binding {} of {parts})", k + 1),
                            &a.values()[r],
                        )?);
                    }
                    FormatKernel::CsrSplit { parts: parts as u8 }
                } else {
                    FormatKernel::Csr
                };
                let low = nnz.min(per);
                let arrays = vec![
                    engine.storage_from("csr.row_ptr", a.row_ptr())?,
                    engine.storage_from("csr.col_idx", &a.col_idx()[..low])?,
                    engine.storage_from("csr.values", &a.values()[..low])?,
                ];
                (kernel, arrays, 0, row_passes, nnz)
            }
            Format::Ell => {
                let e = Ell::from_csr(a, max_padding).map_err(|e| refused(format, e))?;
                let arrays = vec![
                    engine.storage_from("ell.col_idx", e.col_idx())?,
                    engine.storage_from("ell.values", e.values())?,
                ];
                let stored = e.values().len();
                (
                    FormatKernel::Ell,
                    arrays,
                    e.width() as u32,
                    row_passes,
                    stored,
                )
            }
            Format::Dia => {
                let d = Dia::from_csr(a, max_padding).map_err(|e| refused(format, e))?;
                let arrays = vec![
                    engine.storage_from("dia.offsets", d.offsets())?,
                    engine.storage_from("dia.values", d.values())?,
                ];
                let stored = d.values().len();
                (
                    FormatKernel::Dia,
                    arrays,
                    d.ndiag() as u32,
                    row_passes,
                    stored,
                )
            }
            Format::Sell => {
                let c = sell_c(engine);
                let s =
                    Sell::from_csr(a, c, wg.max(c), max_padding).map_err(|e| refused(format, e))?;
                let arrays = vec![
                    engine.storage_from("sell.slice_ptr", s.slice_ptr())?,
                    engine.storage_from("sell.col_idx", s.col_idx())?,
                    engine.storage_from("sell.values", s.values())?,
                    engine.storage_from("sell.perm", s.perm())?,
                ];
                let slots = s.nslots();
                (
                    FormatKernel::Sell { c: c as u32 },
                    arrays,
                    slots as u32,
                    slots.div_ceil(wg) as u32,
                    s.values().len(),
                )
            }
            Format::Bcsr1 | Format::Bcsr2 | Format::Bcsr4 | Format::Bcsr8 => {
                let nb = bcsr_block(format).expect("a BCSR format");
                if nb * nb > wg {
                    return Err(KrylovError::FormatRefused {
                        format: format.as_str().into(),
                        reason: format!(
                            "{nb}×{nb} blocks need a workgroup of at least {}",
                            nb * nb
                        ),
                    });
                }
                let bx = bcsr_bx(a, nb, wg);
                let b =
                    Bcsr::from_csr(a, nb, bx, wg, max_padding).map_err(|e| refused(format, e))?;
                let arrays = vec![
                    engine.storage_from("bcsr.pass_ptr", b.pass_ptr())?,
                    engine.storage_from("bcsr.block_col", b.block_col())?,
                    engine.storage_from("bcsr.values", b.values())?,
                    engine.storage_from("bcsr.block_row", b.block_row())?,
                ];
                (
                    FormatKernel::Bcsr {
                        n: nb as u32,
                        bx: bx as u32,
                    },
                    arrays,
                    b.block_row().len() as u32,
                    b.npasses() as u32,
                    b.values().len(),
                )
            }
        };
        let info = engine.uniform_from(
            "matrix.info",
            &MatInfo {
                rows: n as u32,
                cols: a.ncols() as u32,
                width,
                passes,
                split: split.map_or(u32::MAX, |s| s as u32),
                pad: [0; 3],
            },
        );
        let bytes = arrays.iter().chain(&high).map(|b| b.size()).sum();
        Ok(GpuMatrix {
            nrows: n,
            ncols: a.ncols(),
            nnz: a.nnz(),
            format,
            kernel,
            info,
            arrays,
            high,
            split,
            passes,
            bytes,
            stored: stored as u64,
            compensated: false,
            _t: PhantomData,
        })
    }

    /// The storage format (never `Auto`).
    pub fn format(&self) -> Format {
        self.format
    }

    /// The format library and constants kernels multiplying by this matrix are compiled with.
    pub fn kernel_format(&self) -> FormatKernel {
        self.kernel
    }

    /// The engine's kernel configuration for `T`, specialised for this matrix's format: what
    /// every kernel multiplying by it is compiled with (kernels without a matrix ignore the
    /// format, so solvers use it for all their kernels).
    pub fn shader_config(&self, engine: &Engine) -> ShaderConfig {
        ShaderConfig {
            compensated: self.compensated,
            ..super::operator::operator_config(engine, self)
        }
    }

    /// This matrix with the solver kernels of solves on it compiled with compensated
    /// reductions (`on`; [`ShaderConfig::compensated`], `--reduction compensated`) or plain
    /// ones. Only f32 kernels compensate: in f64 the plain tree's error (log2 n · 1e-16
    /// relative to the terms' magnitudes) is below anything an f64 solve can see, and the
    /// second workgroup array would not fit 16 KiB of workgroup memory at 256 threads.
    pub fn with_compensated(mut self, on: bool) -> Self {
        self.compensated = on && T::PRECISION == crate::base::Precision::F32;
        self
    }

    /// Whether solver kernels on this matrix compile with compensated reductions.
    pub fn compensated(&self) -> bool {
        self.compensated
    }

    /// Row chunks of `WG` rows (slots, block-row groups) the kernels loop over.
    pub fn passes(&self) -> u32 {
        self.passes
    }

    /// Bytes of the format's arrays on the GPU.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Values stored, padding included (paper 003's `e`: each costs one matrix and one
    /// vector load).
    pub fn stored_elements(&self) -> u64 {
        self.stored
    }

    /// Bytes of index data (row pointers, column indices, offsets, permutations).
    pub fn index_bytes(&self) -> u64 {
        self.bytes
            .saturating_sub(self.stored * size_of::<T>() as u64)
    }

    /// The (binding, buffer) pairs of this matrix: 20–24, or 25–29 as a kernel's second
    /// matrix (a split CSR's further parts at [`csr_part_bindings`]).
    pub fn bindings(&self, second: bool) -> Vec<(u32, &wgpu::Buffer)> {
        let base = if second { 25 } else { 20 };
        std::iter::once(&self.info)
            .chain(&self.arrays)
            .enumerate()
            .map(|(i, b)| (base + i as u32, b))
            .chain(self.high.iter().enumerate().map(|(i, b)| {
                let (cols, values) = csr_part_bindings(1 + (i / 2) as u8, second);
                (if i % 2 == 0 { cols } else { values }, b)
            }))
            .collect()
    }

    /// Entries per binding of a CSR matrix whose column indices and values go over several
    /// (`None`: one binding each).
    pub fn split(&self) -> Option<usize> {
        self.split
    }

    /// The bindings a CSR matrix's column indices (and its values) take: 1, or more for a
    /// split one.
    pub fn parts(&self) -> usize {
        1 + self.high.len() / 2
    }
}

/// The most bindings a split CSR's arrays may take on `engine`'s adapter: [`MAX_CSR_PARTS`],
/// or fewer where a kernel's storage buffers per stage would not hold two per part beside
/// the solver's own (16, and a GMRES pool's).
fn csr_max_parts(engine: &Engine) -> u8 {
    let stage = engine.context().limits.max_storage_buffers_per_shader_stage;
    let room = stage.saturating_sub(16) / 2;
    (room.clamp(2, MAX_CSR_PARTS as u32)) as u8
}

/// One matrix in one storage format on one device: the operator every solve uses today.
impl<T: Scalar> super::operator::GpuOperator<T> for GpuMatrix<T> {
    fn nrows(&self) -> usize {
        self.nrows
    }
    fn ncols(&self) -> usize {
        self.ncols
    }
    fn kernel_format(&self) -> FormatKernel {
        self.kernel
    }
    fn passes(&self) -> u32 {
        self.passes
    }
    fn bindings(&self, second: bool) -> Vec<(u32, &wgpu::Buffer)> {
        GpuMatrix::bindings(self, second)
    }
}
