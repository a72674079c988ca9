//! `krylov info`: every GPU adapter and the device `--device auto` picks for f64 and f32.

use std::process::ExitCode;

use krylov_wgpu::gpu::{
    AdapterSummary, DeviceChoice, DeviceInfo, DevicePlan, DevicePreference, list_adapters,
};
use krylov_wgpu::{Precision, Result};

pub fn info(json: bool) -> Result<ExitCode> {
    let adapters = list_adapters();
    // What `krylov solve` would pick with the same environment (KRYLOV_ADAPTER,
    // KRYLOV_REQUIRE_GPU), for each precision.
    let auto = |precision: Precision| {
        DeviceChoice::from_env(DevicePreference::Auto)
            .precision(precision)
            .plan(&adapters)
    };
    let plans = [
        (Precision::F64, auto(Precision::F64)?),
        (Precision::F32, auto(Precision::F32)?),
    ];
    if json {
        print_json(&adapters, &plans);
    } else {
        print_table(&adapters, &plans);
    }
    Ok(ExitCode::SUCCESS)
}

/// The adapter index a plan picks; `None` for the CPU reference.
fn picked(plan: &DevicePlan) -> Option<usize> {
    match plan {
        DevicePlan::Gpu { index, .. } => Some(*index),
        DevicePlan::Cpu { .. } => None,
    }
}

/// `--json`: `{"adapters": [...], "auto": {"f64": {device, index, reason}, "f32": ...}}`.
fn print_json(adapters: &[AdapterSummary], plans: &[(Precision, DevicePlan)]) {
    let auto: serde_json::Map<String, serde_json::Value> = plans
        .iter()
        .map(|(precision, plan)| {
            let index = picked(plan);
            let device = match index {
                Some(i) => DeviceInfo::gpu(&adapters[i]),
                None => DeviceInfo::cpu(),
            };
            (
                precision.to_string(),
                serde_json::json!({"device": device, "index": index, "reason": plan.reason()}),
            )
        })
        .collect();
    println!(
        "{}",
        serde_json::json!({"adapters": adapters, "auto": auto})
    );
}

/// A block per adapter (auto's picks marked), then a line per precision saying why.
fn print_table(adapters: &[AdapterSummary], plans: &[(Precision, DevicePlan)]) {
    if adapters.is_empty() {
        println!("no GPU adapter found (no Vulkan, Metal, DX12 or GL driver)");
    }
    for a in adapters {
        let yn = |b: bool| if b { "yes" } else { "no" };
        let marks: Vec<String> = plans
            .iter()
            .filter(|(_, plan)| picked(plan) == Some(a.index))
            .map(|(p, _)| p.to_string())
            .collect();
        println!(
            "[{}] {} ({}, {}{}){}",
            a.index,
            a.name,
            a.backend,
            a.device_type,
            if a.software { ", software" } else { "" },
            if marks.is_empty() {
                String::new()
            } else {
                format!("  <- auto for {}", marks.join(" and "))
            }
        );
        println!("    driver:            {}", a.driver);
        println!(
            "    f64: {}   subgroups: {} (size {}..{})   timestamps: {}",
            yn(a.shader_f64),
            yn(a.subgroup),
            a.subgroup_min_size,
            a.subgroup_max_size,
            yn(a.timestamp_query)
        );
        println!(
            "    max storage binding: {} MiB   max buffer: {} MiB   workgroups/dim: {}   invocations/wg: {}   wg memory: {} KiB",
            a.max_storage_buffer_binding_size >> 20,
            a.max_buffer_size >> 20,
            a.max_compute_workgroups_per_dimension,
            a.max_compute_invocations_per_workgroup,
            a.max_compute_workgroup_storage_size >> 10
        );
    }
    for (precision, plan) in plans {
        let device = match picked(plan) {
            Some(i) => format!("[{i}] {}", adapters[i].name),
            None => "CPU reference".to_string(),
        };
        println!("auto for {precision}: {device}: {}", plan.reason());
    }
}
