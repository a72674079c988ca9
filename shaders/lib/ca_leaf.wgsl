// ca_leaf.wgsl: the row blocks of CA-GMRES's CAQR (ca_tsqr_leaf, ca_tsqr_apply). The block
// W = pool[params.dst .. params.dst + params.comp) (vector k at k·n) is split into
// params.groups leaves of consecutive rows, as evenly as integers allow (the first n mod g
// leaves have one row more); workgroup w works on leaf w. The host chooses g so that every
// leaf has at least s rows.

const CA_MAX_S: u32 = 16u;


// The first row of leaf w (leaf_row(g) = n), without the overflow of w·n.
fn leaf_row(w: u32) -> u32 {
    let base = params.n / params.groups;
    let rem = params.n % params.groups;
    return w * base + min(w, rem);
}

// Index in the pool of row `row` of column `col` of the block.
fn leaf_at(col: u32, row: u32) -> u32 {
    return (params.dst + col) * params.n + row;
}
