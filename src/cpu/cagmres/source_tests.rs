//! [`Source`] on a fake backend that defers its blocks: what is recorded ahead, what is
//! recorded when a cycle outruns it, and what is made on demand after a readback that needs
//! the host. The blocks' numbers carry their start column, so order mistakes show.

use nalgebra::DMatrix;

use super::*;
use crate::cpu::cagmres::cycles::Collected;
use crate::cpu::cagmres::tsqr::TsqrReport;

#[derive(Default)]
struct Fake {
    /// Blocks recorded since the last collect, in order.
    recorded: Vec<usize>,
    /// Blocks made on demand.
    eager: Vec<usize>,
    collects: usize,
    /// The collect (1-based) that reports a block needing the host.
    fail_at: Option<usize>,
}

fn block(j: usize, steps: usize) -> BlockResult {
    BlockResult {
        c: DMatrix::from_element(j + 1, steps, j as f64),
        r: DMatrix::identity(steps, steps),
        report: TsqrReport {
            requested: Tsqr::CholQr2,
            used: Tsqr::CholQr2,
            fallback_reason: None,
            orth_error: 0.0,
            reductions: 2,
            host_syncs: 2,
        },
        reductions: 4,
    }
}

impl CaBackend for Fake {
    fn restart(&mut self) -> Result<f64> {
        Ok(1.0)
    }
    fn start_basis(&mut self, _rho: f64) -> Result<()> {
        Ok(())
    }
    fn powers(&mut self, j: usize, steps: usize, _: &[Shift], _: f64) -> Result<DMatrix<f64>> {
        Ok(DMatrix::from_element(steps + 1, steps, j as f64))
    }
    fn borth(&mut self, j: usize, steps: usize, _: Tsqr) -> Result<BlockResult> {
        self.eager.push(j);
        Ok(block(j, steps))
    }
    fn update_x(&mut self, _y: &[f64]) -> Result<()> {
        Ok(())
    }
    fn defers(&self, _: Tsqr) -> bool {
        true
    }
    fn record_borth(&mut self, j: usize, _steps: usize, _: Tsqr) -> Result<()> {
        self.recorded.push(j);
        Ok(())
    }
    fn collect(&mut self, blocks: &[(usize, usize)], _: Tsqr) -> Result<Collected> {
        self.collects += 1;
        let recorded = std::mem::take(&mut self.recorded);
        assert_eq!(recorded, blocks.iter().map(|b| b.0).collect::<Vec<_>>());
        if self.fail_at == Some(self.collects) {
            return Ok(Collected {
                rho: None,
                blocks: None,
            });
        }
        Ok(Collected {
            rho: None,
            blocks: Some(blocks.iter().map(|&(j, s)| Ok(block(j, s))).collect()),
        })
    }
}

const PLAN: [(usize, usize); 4] = [(0, 4), (4, 4), (8, 4), (12, 2)];

/// Takes every block of PLAN from `src`, checking each is the one asked for.
fn take_all(src: &mut Source, be: &mut Fake) {
    for &(j, steps) in &PLAN {
        let (b, r) = src.next(be, j, steps).unwrap();
        assert_eq!((b[(0, 0)], r.c[(0, 0)]), (j as f64, j as f64));
        assert_eq!((r.c.nrows(), r.c.ncols()), (j + 1, steps));
    }
}

#[test]
fn a_cycle_that_outruns_its_blocks_recorded_ahead_records_the_rest_once() {
    let mut be = Fake::default();
    let mut src = Source::new(&mut be, &PLAN, 1, Tsqr::CholQr2, &[], 1.0).unwrap();
    assert_eq!((be.collects, src.recorded), (1, 4));
    take_all(&mut src, &mut be);
    assert_eq!(
        (be.collects, src.collects, src.recorded, src.eager),
        (2, 2, 14, 0)
    );
    assert!(be.eager.is_empty());
}

#[test]
fn a_cycle_recorded_whole_reads_back_once() {
    let mut be = Fake::default();
    let mut src = Source::new(&mut be, &PLAN, PLAN.len(), Tsqr::CholQr2, &[], 1.0).unwrap();
    take_all(&mut src, &mut be);
    assert_eq!((src.collects, src.recorded, src.eager), (1, 14, 0));
}

#[test]
fn blocks_that_need_the_host_are_made_on_demand_from_the_first_of_them() {
    // The rest (blocks 4, 8, 12) comes back needing the host: made again one by one.
    let mut be = Fake {
        fail_at: Some(2),
        ..Fake::default()
    };
    let mut src = Source::new(&mut be, &PLAN, 1, Tsqr::CholQr2, &[], 1.0).unwrap();
    take_all(&mut src, &mut be);
    assert_eq!(be.eager, vec![4, 8, 12]);
    assert_eq!((src.collects, src.recorded, src.eager), (2, 14, 10));
    // The first readback fails: the whole cycle on demand.
    let mut be = Fake {
        fail_at: Some(1),
        ..Fake::default()
    };
    let mut src = Source::new(&mut be, &PLAN, 2, Tsqr::CholQr2, &[], 1.0).unwrap();
    take_all(&mut src, &mut be);
    assert_eq!(be.eager, vec![0, 4, 8, 12]);
    assert_eq!((src.collects, src.recorded, src.eager), (1, 8, 14));
}

#[test]
fn the_prediction_records_twice_the_vectors_the_last_rate_needs_and_one_block_more() {
    let plan: Vec<(usize, usize)> = (0..6).map(|b| (5 * b, 5)).collect();
    // The last cycle: 1 → 1e-4 over 30 columns (a factor 10 in 7.5 vectors); from 1e-4 to
    // 1e-5 then needs 7.5 vectors: 15 with the margin, three blocks, and one more.
    let prev = Previous {
        start: 1.0,
        est: 1e-4,
        columns: 30,
    };
    assert_eq!(ahead_blocks(&plan, Some(prev), 1e-5), 4);
    // 1e-6 needs 15 (30 with the margin): the whole cycle.
    assert_eq!(ahead_blocks(&plan, Some(prev), 1e-6), 6);
    // No cycle before, one that did not converge, or one already below the threshold: all.
    assert_eq!(ahead_blocks(&plan, None, 1e-5), 6);
    let flat = Previous { est: 1.0, ..prev };
    assert_eq!(ahead_blocks(&plan, Some(flat), 1e-5), 6);
    assert_eq!(ahead_blocks(&plan, Some(prev), 1e-3), 6);
    let nan = Previous {
        est: f64::NAN,
        ..prev
    };
    assert_eq!(ahead_blocks(&plan, Some(nan), 1e-5), 6);
    // Fast convergence: the block the prediction needs and one more.
    let fast = Previous {
        start: 1.0,
        est: 1e-20,
        columns: 30,
    };
    assert_eq!(ahead_blocks(&plan, Some(fast), 1e-21), 2);
}
