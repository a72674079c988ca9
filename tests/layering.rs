//! The layers of `src/` (ARCHITECTURE.md): every folder may use the folders below it and
//! never one above, so no import circle can form. This test reads every `crate::…` path in
//! the library's code (comments excluded) and fails on a path that climbs.
//!
//! ```text
//! model                          performance model: calibrate, predict (uses everything below)
//! bench                          benchmark harness (uses everything below)
//! solvers                        the GPU solvers: one driver, one file per algorithm
//! precond                        preconditioners on the GPU (host setup + apply kernels)
//! cpu        gpu                 the f64 reference | device, engine, kernels, formats
//! matrix                         storage formats, Matrix Market, generators, system checks
//! base                           vocabulary: scalar, error, options, report, monitor
//! ```

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and the modules it may use (itself always allowed).
const LAYERS: &[(&str, &[&str])] = &[
    ("base", &[]),
    ("matrix", &["base"]),
    ("cpu", &["base", "matrix"]),
    ("gpu", &["base", "matrix"]),
    ("precond", &["base", "matrix", "cpu", "gpu"]),
    ("solvers", &["base", "matrix", "cpu", "gpu", "precond"]),
    (
        "bench",
        &["base", "matrix", "cpu", "gpu", "precond", "solvers"],
    ),
    (
        "model",
        &[
            "base", "matrix", "cpu", "gpu", "precond", "solvers", "bench",
        ],
    ),
];

/// Root re-exports that name a module of the ground floor (`crate::scalar` = `base::scalar`).
const ALIASES: &[(&str, &str)] = &[("scalar", "base"), ("error", "base")];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`None` for lib.rs and binaries).
fn layer_of(src: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(src).unwrap();
    let first = rel
        .components()
        .next()?
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let name = first.strip_suffix(".rs").unwrap_or(&first).to_string();
    (name != "lib" && name != "bin").then_some(name)
}

/// The top-level modules named by `crate::` paths in `code` (comments stripped), including
/// every item of a `crate::{a, b::c}` group.
fn crate_paths(code: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut rest = code;
    while let Some(i) = rest.find("crate::") {
        let before = rest[..i].chars().last();
        rest = &rest[i + "crate::".len()..];
        // `krylov_wgpu_crate::` or `$crate::` are not paths into this crate's root.
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$') {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for item in group[..end].split(',') {
                let head: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !head.is_empty() {
                    found.insert(head);
                }
            }
        } else {
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            found.insert(head);
        }
    }
    found
}

fn strip_comments(text: &str) -> String {
    text.lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn no_module_of_src_uses_a_layer_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let known: BTreeSet<&str> = LAYERS.iter().map(|(l, _)| *l).collect();
    let mut violations = Vec::new();
    let mut checked = 0;
    for file in &files {
        let Some(layer) = layer_of(&src, file) else {
            continue;
        };
        assert!(
            known.contains(layer.as_str()),
            "{} is in `{layer}`, a folder with no layer: add it to LAYERS and ARCHITECTURE.md",
            file.display()
        );
        let allowed = LAYERS.iter().find(|(l, _)| *l == layer).unwrap().1;
        let code = strip_comments(&std::fs::read_to_string(file).unwrap());
        for target in crate_paths(&code) {
            let target = ALIASES
                .iter()
                .find(|(a, _)| *a == target)
                .map_or(target.clone(), |(_, t)| t.to_string());
            checked += 1;
            if target != layer && !allowed.contains(&target.as_str()) {
                violations.push(format!(
                    "{} (layer `{layer}`) uses crate::{target}",
                    file.strip_prefix(&src).unwrap().display()
                ));
            }
        }
    }
    assert!(checked > 50, "the scan found only {checked} crate:: paths");
    assert!(
        violations.is_empty(),
        "imports that climb a layer:\n{}",
        violations.join("\n")
    );
}

#[test]
fn the_scanner_sees_groups_and_ignores_comments() {
    let code = strip_comments(
        "use crate::{gpu::Engine, base::Scalar};\n// crate::solvers in a comment\nlet x = crate::cpu::norm(&v); $crate::matrix",
    );
    let found: Vec<String> = crate_paths(&code).into_iter().collect();
    assert_eq!(found, ["base", "cpu", "gpu"]);
}

#[test]
fn the_layers_have_no_circle() {
    // A layer may only use layers listed before it, so the order is a topological order.
    for (i, (layer, allowed)) in LAYERS.iter().enumerate() {
        for a in *allowed {
            let j = LAYERS.iter().position(|(l, _)| l == a).unwrap();
            assert!(j < i, "{layer} may use {a}, which is not below it");
        }
    }
}
