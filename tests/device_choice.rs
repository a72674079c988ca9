//! The rules of `--device auto|gpu|cpu` (`DeviceChoice::plan`) on made-up adapter lists: every
//! machine a user may have, without needing that machine.

use krylov_wgpu::gpu::{AdapterSummary, DeviceChoice, DevicePlan, DevicePreference};
use krylov_wgpu::{KrylovError, Precision};

/// One adapter as `list_adapters` would report it.
fn adapter(name: &str, backend: &str, device_type: &str, f64: bool) -> AdapterSummary {
    AdapterSummary::described(name, backend, device_type, f64)
}

/// A ranked list (index = position), as `list_adapters` returns it.
fn list(adapters: &[AdapterSummary]) -> Vec<AdapterSummary> {
    adapters
        .iter()
        .cloned()
        .enumerate()
        .map(|(i, mut a)| {
            a.index = i;
            a
        })
        .collect()
}

fn lavapipe() -> AdapterSummary {
    adapter("llvmpipe (LLVM 15.0.6, 256 bits)", "Vulkan", "Cpu", true)
}
fn gl_llvmpipe() -> AdapterSummary {
    adapter("llvmpipe (LLVM 15.0.6, 256 bits)", "Gl", "Cpu", false)
}
fn h200() -> AdapterSummary {
    adapter("NVIDIA H200", "Vulkan", "DiscreteGpu", true)
}
fn laptop_igpu() -> AdapterSummary {
    adapter(
        "Intel(R) Iris(R) Xe Graphics",
        "Vulkan",
        "IntegratedGpu",
        true,
    )
}
fn apple() -> AdapterSummary {
    adapter("Apple M2", "Metal", "IntegratedGpu", false)
}

fn auto(p: Precision) -> DeviceChoice {
    DeviceChoice::new(DevicePreference::Auto).precision(p)
}
fn gpu(p: Precision) -> DeviceChoice {
    DeviceChoice::new(DevicePreference::Gpu).precision(p)
}

#[track_caller]
fn expect_gpu(plan: DevicePlan, index: usize, reason_has: &str) {
    match plan {
        DevicePlan::Gpu { index: i, reason } => {
            assert_eq!(i, index, "{reason}");
            assert!(
                reason.contains(reason_has),
                "reason `{reason}` lacks `{reason_has}`"
            );
        }
        other => panic!("expected GPU {index}, got {other:?}"),
    }
}

#[track_caller]
fn expect_cpu(plan: DevicePlan, reason_has: &[&str]) {
    match plan {
        DevicePlan::Cpu { reason } => {
            for s in reason_has {
                assert!(reason.contains(s), "reason `{reason}` lacks `{s}`");
            }
        }
        other => panic!("expected the CPU, got {other:?}"),
    }
}

#[test]
fn no_adapter_auto_is_cpu_and_gpu_is_a_typed_error() {
    for p in [Precision::F32, Precision::F64] {
        expect_cpu(auto(p).plan(&[]).unwrap(), &["no GPU adapter"]);
        let e = gpu(p).plan(&[]).unwrap_err();
        assert!(matches!(e, KrylovError::NoAdapter(_)), "{e}");
        assert!(e.to_string().contains("mesa-vulkan-drivers"), "{e}");
    }
}

#[test]
fn software_adapters_are_skipped_by_auto_only() {
    // A Debian machine with lavapipe installed (Vulkan) and Mesa's GL.
    let machine = list(&[lavapipe(), gl_llvmpipe()]);
    for p in [Precision::F32, Precision::F64] {
        expect_cpu(
            auto(p).plan(&machine).unwrap(),
            &[
                "no hardware GPU",
                "software adapters",
                "llvmpipe",
                "skipped",
                "--device gpu",
            ],
        );
        expect_gpu(gpu(p).plan(&machine).unwrap(), 0, "software adapter");
        // CI: KRYLOV_REQUIRE_GPU=1 lets auto prove the kernels on lavapipe.
        let mut c = auto(p);
        c.allow_software = true;
        expect_gpu(c.plan(&machine).unwrap(), 0, "KRYLOV_REQUIRE_GPU");
        // Naming the adapter is asking for it.
        expect_gpu(
            auto(p)
                .adapter(Some("llvmpipe".into()))
                .plan(&machine)
                .unwrap(),
            0,
            "selected",
        );
    }
}

#[test]
fn gl_only_machine() {
    // Debian without a Vulkan driver: wgpu sees only GL's llvmpipe, which has no f64.
    let machine = list(&[gl_llvmpipe()]);
    expect_cpu(
        auto(Precision::F64).plan(&machine).unwrap(),
        &["software adapter llvmpipe", "(Gl)", "skipped"],
    );
    let e = gpu(Precision::F64).plan(&machine).unwrap_err();
    assert!(matches!(e, KrylovError::NoUsableAdapter { .. }), "{e}");
    assert!(e.to_string().contains("SHADER_F64"), "{e}");
    expect_gpu(gpu(Precision::F32).plan(&machine).unwrap(), 0, "Gl");
    // auto never takes GL, not even with KRYLOV_REQUIRE_GPU.
    let mut c = auto(Precision::F32);
    c.allow_software = true;
    expect_cpu(c.plan(&machine).unwrap(), &["skipped"]);
}

#[test]
fn hardware_before_software_discrete_before_integrated() {
    let machine = list(&[h200(), laptop_igpu(), lavapipe()]);
    expect_gpu(
        auto(Precision::F64).plan(&machine).unwrap(),
        0,
        "best hardware GPU with f64: NVIDIA H200",
    );
    expect_gpu(
        gpu(Precision::F64).plan(&machine).unwrap(),
        0,
        "NVIDIA H200",
    );
    let laptop = list(&[laptop_igpu(), lavapipe()]);
    expect_gpu(auto(Precision::F32).plan(&laptop).unwrap(), 0, "Iris");
}

#[test]
fn f64_on_a_gpu_without_shader_f64() {
    // An Apple GPU under Metal has no doubles: auto runs f64 on the CPU and says why.
    let mac = list(&[apple()]);
    expect_cpu(
        auto(Precision::F64).plan(&mac).unwrap(),
        &[
            "no hardware GPU with f64",
            "Apple M2",
            "SHADER_F64",
            "--precision f32",
        ],
    );
    expect_gpu(auto(Precision::F32).plan(&mac).unwrap(), 0, "Apple M2");
    let e = gpu(Precision::F64).plan(&mac).unwrap_err();
    assert!(e.to_string().contains("SHADER_F64"), "{e}");
    // A second GPU that has f64 is preferred for f64 even if ranked after.
    let two = list(&[apple(), laptop_igpu()]);
    expect_gpu(auto(Precision::F64).plan(&two).unwrap(), 1, "Iris");
    expect_gpu(auto(Precision::F32).plan(&two).unwrap(), 0, "Apple");
    // A selected adapter without f64: auto falls back, gpu errors.
    expect_cpu(
        auto(Precision::F64)
            .adapter(Some("apple".into()))
            .plan(&two)
            .unwrap(),
        &["selected adapter `Apple M2` has no SHADER_F64"],
    );
    let e = gpu(Precision::F64)
        .adapter(Some("0".into()))
        .plan(&two)
        .unwrap_err();
    assert!(matches!(e, KrylovError::MissingFeature { .. }), "{e}");
}

#[test]
fn hardware_gl_adapter_is_only_used_when_asked() {
    let machine = list(&[adapter("AMD Radeon RX 7600", "Gl", "DiscreteGpu", false)]);
    expect_cpu(auto(Precision::F32).plan(&machine).unwrap(), &["OpenGL"]);
    expect_gpu(gpu(Precision::F32).plan(&machine).unwrap(), 0, "Radeon");
}

#[test]
fn selectors_cpu_and_cpu_only_requests() {
    let machine = list(&[h200(), lavapipe()]);
    expect_gpu(
        auto(Precision::F64)
            .adapter(Some("1".into()))
            .plan(&machine)
            .unwrap(),
        1,
        "selected",
    );
    let e = auto(Precision::F64)
        .adapter(Some("radeon".into()))
        .plan(&machine)
        .unwrap_err();
    assert!(
        matches!(e, KrylovError::NoAdapter(_)) && e.to_string().contains("NVIDIA H200"),
        "{e}"
    );
    expect_cpu(
        DeviceChoice::new(DevicePreference::Cpu)
            .plan(&machine)
            .unwrap(),
        &["--device cpu"],
    );
    let why = Some("chebyshev does not run on the GPU yet".to_string());
    expect_cpu(
        auto(Precision::F64)
            .cpu_only(why.clone())
            .plan(&machine)
            .unwrap(),
        &["chebyshev does not run on the GPU yet"],
    );
    let e = gpu(Precision::F64)
        .cpu_only(why)
        .plan(&machine)
        .unwrap_err();
    assert!(matches!(e, KrylovError::Unsupported(_)), "{e}");
}
