//! Portability proof without a Mac or Windows machine: every kernel in `shaders/<folder>/`, in
//! both precisions, parses and validates with naga and translates to SPIR-V (Vulkan), MSL
//! (Metal) and HLSL (DX12). Metal has no 64-bit floats, so f64 kernels must be *refused* under Metal's
//! capabilities (wgpu never offers SHADER_F64 there, and the library then reports MissingFeature).

use krylov_wgpu::Precision;
use krylov_wgpu::gpu::shader::{FormatKernel, KERNELS, Piece, ShaderConfig, specialise};
use naga::valid::{Capabilities, ValidationFlags, Validator};
use std::path::Path;

fn module(name: &str, config: ShaderConfig) -> (naga::Module, naga::valid::ModuleInfo) {
    let what = format!("{name} ({}, {:?})", config.precision, config.format);
    let k = KERNELS.iter().find(|k| k.name == name).unwrap();
    let src = specialise(k, config);
    let module = naga::front::wgsl::parse_str(&src)
        .unwrap_or_else(|e| panic!("{what} does not parse:\n{}", e.emit_to_string(&src)));
    // (`@coherent`: cooperative CG's buffers; wgpu offers it on Vulkan, DX12, Metal 3.2+.)
    let caps = Capabilities::FLOAT64
        | Capabilities::SUBGROUP
        | Capabilities::SUBGROUP_BARRIER
        | Capabilities::MEMORY_DECORATION_COHERENT;
    let info = Validator::new(ValidationFlags::all(), caps)
        .validate(&module)
        .unwrap_or_else(|e| panic!("{what} does not validate:\n{}", e.emit_to_string(&src)));
    (module, info)
}

/// The `.wgsl` files below `dir`, as paths relative to the crate root (`shaders/cg/cg_init.wgsl`).
fn wgsl_files(root: &Path, dir: &Path, out: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            wgsl_files(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "wgsl") {
            let rel = path.strip_prefix(root).unwrap();
            out.push(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn every_kernel_is_registered_once_and_exists_as_a_file() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let shaders = root.join("shaders");
    // Every .wgsl below shaders/ except the library pieces of shaders/lib/ is a kernel.
    let mut files = Vec::new();
    wgsl_files(root, &shaders, &mut files);
    files.retain(|f| !f.starts_with("shaders/lib/"));
    files.sort();
    // KERNELS names each kernel once, in the folder its file is in.
    let mut registered: Vec<String> = KERNELS.iter().map(|k| k.path()).collect();
    registered.sort();
    assert_eq!(
        files, registered,
        "the kernels below shaders/ (without shaders/lib/) and gpu::shader::KERNELS must be \
         the same files, each registered once"
    );
    let mut names: Vec<&str> = KERNELS.iter().map(|k| k.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), KERNELS.len(), "kernel names are unique");
    for k in KERNELS {
        assert_eq!(
            std::fs::read_to_string(root.join(k.path())).unwrap(),
            k.source,
            "{}: the source compiled in is the file",
            k.name
        );
        assert!(
            !k.folder.is_empty() && k.folder != "lib" && !k.folder.contains('/'),
            "{}: one folder of shaders/ per concern, not lib/",
            k.name
        );
    }
}

#[test]
fn every_library_piece_exists_and_is_used() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for piece in Piece::ALL {
        assert!(piece.path().starts_with("shaders/lib/"), "{piece:?}");
        assert_eq!(
            std::fs::read_to_string(root.join(piece.path())).unwrap(),
            piece.source(),
            "{piece:?}"
        );
        assert!(
            KERNELS.iter().any(|k| k.pieces.contains(&piece)),
            "{piece:?} is used by a kernel"
        );
    }
}

#[test]
fn every_kernel_translates_to_spirv_msl_and_hlsl() {
    for k in KERNELS {
        // Solver kernels come in two reduction flavours: subgroup operations and workgroup memory.
        let flavours: &[bool] = if k.solver { &[false, true] } else { &[false] };
        // Kernels with a matrix come in every storage format (shaders/lib/format_*.wgsl).
        let formats: &[FormatKernel] = if k.matrices > 0 {
            &[
                FormatKernel::Csr,
                FormatKernel::CsrSplit { parts: 2 },
                FormatKernel::CsrSplit { parts: 3 },
                FormatKernel::CsrSplit { parts: 16 },
                FormatKernel::Ell,
                FormatKernel::Dia,
                FormatKernel::Sell { c: 32 },
                FormatKernel::Bcsr { n: 1, bx: 4 },
                FormatKernel::Bcsr { n: 8, bx: 2 },
            ]
        } else {
            &[FormatKernel::Csr]
        };
        for (precision, &subgroups, &format) in [Precision::F32, Precision::F64]
            .into_iter()
            .flat_map(|p| flavours.iter().map(move |s| (p, s)))
            .flat_map(|(p, s)| formats.iter().map(move |f| (p, s, f)))
        {
            let config = ShaderConfig {
                subgroups,
                format,
                ..ShaderConfig::new(precision)
            };
            let (module, info) = module(k.name, config);
            let spv_opts = naga::back::spv::Options {
                lang_version: (1, 3),
                ..Default::default()
            };
            let spv = naga::back::spv::write_vec(&module, &info, &spv_opts, None)
                .unwrap_or_else(|e| panic!("{} ({precision}) -> SPIR-V: {e}", k.name));
            assert!(
                spv.len() > 5 && spv[0] == 0x0723_0203,
                "{}: SPIR-V magic",
                k.name
            );

            match precision {
                Precision::F32 => {
                    let msl_opts = naga::back::msl::Options {
                        lang_version: (2, 4),
                        ..Default::default()
                    };
                    let (text, _) = naga::back::msl::write_string(
                        &module,
                        &info,
                        &msl_opts,
                        &naga::back::msl::PipelineOptions::default(),
                    )
                    .unwrap_or_else(|e| panic!("{} (f32) -> MSL: {e}", k.name));
                    assert!(
                        text.contains("kernel void"),
                        "{}: MSL has a compute entry point",
                        k.name
                    );
                }
                Precision::F64 => {
                    // Metal has no doubles: a validator with Metal's capabilities (no FLOAT64)
                    // must reject the f64 kernel, which is how wgpu refuses it there.
                    let metal_caps = Capabilities::SUBGROUP
                        | Capabilities::SUBGROUP_BARRIER
                        | Capabilities::MEMORY_DECORATION_COHERENT;
                    assert!(
                        Validator::new(ValidationFlags::all(), metal_caps)
                            .validate(&module)
                            .is_err(),
                        "{}: f64 kernel validated without FLOAT64",
                        k.name
                    );
                }
            }

            let hlsl_opts = naga::back::hlsl::Options {
                shader_model: naga::back::hlsl::ShaderModel::V6_0,
                ..Default::default()
            };
            let pipeline = naga::back::hlsl::PipelineOptions::default();
            let mut text = String::new();
            naga::back::hlsl::Writer::new(&mut text, &hlsl_opts, &pipeline)
                .write(&module, &info, None)
                .unwrap_or_else(|e| panic!("{} ({precision}) -> HLSL: {e}", k.name));
            assert!(
                text.contains("[numthreads("),
                "{}: HLSL has a compute entry point",
                k.name
            );
        }
    }
}

#[test]
fn the_prelude_selects_the_precision() {
    let k = &KERNELS[0];
    assert!(specialise(k, ShaderConfig::new(Precision::F32)).contains("alias Real = f32;"));
    assert!(specialise(k, ShaderConfig::new(Precision::F64)).contains("alias Real = f64;"));
}

/// The GMRES and CA-GMRES kernels compile with the pool over one to 32 bindings (beyond eight
/// the part found by division)
/// (`gpu::shader::pool_source`, `ShaderConfig::pool_parts`), in both precisions and
/// reduction flavours, binding exactly the parts asked for.
#[test]
fn gmres_kernels_validate_with_the_pool_over_several_bindings() {
    use krylov_wgpu::gpu::shader::{MAX_POOL_PARTS, PoolLayout};
    let mut seen = 0;
    for k in KERNELS.iter().filter(|k| {
        [
            Piece::GmresPool,
            Piece::PoolRead,
            Piece::DistPool,
            Piece::DistPoolRead,
        ]
        .iter()
        .any(|p| k.pieces.contains(p))
    }) {
        let dist = k.pieces.contains(&Piece::DistPool) || k.pieces.contains(&Piece::DistPoolRead);
        let layout = if dist {
            PoolLayout::Dist
        } else {
            PoolLayout::Solver
        };
        for precision in [Precision::F32, Precision::F64] {
            for subgroups in [false, true] {
                for pool_parts in [1, 2, 3, 8, 9, MAX_POOL_PARTS] {
                    let config = ShaderConfig {
                        subgroups,
                        pool_parts,
                        ..ShaderConfig::new(precision)
                    };
                    let (module, _) = module(k.name, config);
                    let has = |name: &str| {
                        module
                            .global_variables
                            .iter()
                            .any(|(_, g)| g.name.as_deref() == Some(name))
                    };
                    let bound_at = |b: u32| {
                        module
                            .global_variables
                            .iter()
                            .any(|(_, g)| g.binding.as_ref().is_some_and(|r| r.binding == b))
                    };
                    for part in 1..MAX_POOL_PARTS {
                        let want = part < pool_parts;
                        assert_eq!(
                            has(&format!("pool_{part}")),
                            want,
                            "{} {pool_parts}",
                            k.name
                        );
                        assert_eq!(bound_at(layout.part(part)), want, "{}", k.name);
                    }
                    assert_eq!(has("pool_bounds"), pool_parts > 1, "{}", k.name);
                    assert!(bound_at(layout.first()), "{}", k.name);
                }
            }
        }
        seen += 1;
    }
    // 13 GMRES kernels (fused GMRES's gmres_scale_spmv_dots, p(1)-GMRES's gmres_p1_step and
    // one-workgroup GMRES's gmres_workgroup among them), CA-GMRES's ca_powers, ca_block_dots,
    // ca_block_dots_pairs, ca_block_dots_staged, ca_block_update, ca_tsqr_leaf and
    // ca_tsqr_apply; distributed GMRES's four kernels on its basis and distributed CA-GMRES's
    // dist_ca_load, dist_ca_powers, dist_ca_mpk_load and dist_ca_mpk_step.
    assert_eq!(seen, 28, "GMRES and CA-GMRES kernels on the pool");
}
