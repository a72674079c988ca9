//! The device profile `krylov calibrate` writes: which device, its fitted curves and costs,
//! as versioned JSON under the user's cache directory, reused until the driver changes.
//!
//! Location: `$KRYLOV_PROFILE_DIR` when set, else the cache directory of
//! [`directories::ProjectDirs`] (`~/.cache/krylov-wgpu` on Linux), one file per adapter and
//! backend ([`Profile::file_name`]); `--profile FILE` names one explicitly.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::layout::LayoutParams;
use super::sigmoid::{Fit, Sigmoid};

mod store;

pub use store::{
    default_profile_path, find_for_adapter, find_for_adapter_in, profile_dir, utc_now,
};

/// Version of the profile's JSON layout; a file of another version is rejected.
/// Version 2: kernel samples net of the timestamp overhead (`timestamp_overhead_seconds`);
/// a version-1 profile's curves include it and predict small systems too slow.
pub const SCHEMA_VERSION: u32 = 2;

/// The environment variable that overrides the profile directory.
pub const PROFILE_DIR_ENV: &str = "KRYLOV_PROFILE_DIR";

/// What identifies the device a profile was measured on (from `wgpu::AdapterInfo`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DeviceIdentity {
    pub name: String,
    pub vendor: u32,
    pub device: u32,
    pub backend: String,
    pub driver: String,
    pub driver_info: String,
}

impl std::fmt::Display for DeviceIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} ({}, {:04x}:{:04x}, driver {} {})",
            self.name, self.backend, self.vendor, self.device, self.driver, self.driver_info
        )
    }
}

/// A calibrated device: the constants and curves of the time model ([`super`]).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Profile {
    pub schema_version: u32,
    pub device: DeviceIdentity,
    /// When it was measured (UTC, `YYYY-MM-DDTHH:MM:SSZ`).
    pub created: String,
    /// Calibrated with `--quick` (fewer and smaller sizes).
    pub quick: bool,
    /// Threads per workgroup the kernels were compiled with.
    pub workgroup_size: usize,
    /// SELL-C-σ slice height on this device.
    pub sell_c: usize,
    /// The largest storage binding (formats whose arrays exceed it are refused).
    pub max_binding_bytes: u64,
    /// Seconds one dependent dispatch costs inside a pass (`t_d`) beyond the kernel's own time.
    pub dispatch_seconds: f64,
    /// Seconds GPU timestamps added to each timed launch during calibration (`t_ts`), already
    /// subtracted from the curves' samples and the finishing constants (recorded to show the
    /// correction; predictions do not use it).
    #[serde(default)]
    pub timestamp_overhead_seconds: f64,
    /// Seconds of one submit-and-read round trip beyond its dispatch.
    pub round_trip_seconds: f64,
    /// One fitted curve per kernel, keyed by the kernel's name (`update_cg`, `axpy`, …) or,
    /// for the kernels that multiply by A, `name:format` (`spmv_dot_cg:csr`).
    pub kernels: BTreeMap<String, Fit>,
    /// GPU seconds of the one-workgroup finishing kernels (`dot_finish`, `bicgstab_finish`),
    /// which move no data to speak of.
    pub constants: BTreeMap<String, f64>,
    /// Weight γ of the gather excess per format name ([`super::gather`]), fitted on the
    /// calibration's random-column matrices; a format without one (a profile written before
    /// the term, or `--quick`) counts every excess byte as a streamed byte (γ = 1).
    #[serde(default)]
    pub gather_weights: BTreeMap<String, f64>,
    /// Seconds per step of the longest per-thread loop τ per format name ([`super::chain`]),
    /// fitted jointly with the format's curves; a format without one (a profile written
    /// before the term, or a calibration whose chains did not vary) adds nothing.
    #[serde(default)]
    pub chain_step_seconds: BTreeMap<String, f64>,
    /// The chain the format's curves describe per format name: the shortest among its
    /// calibration samples (a stencil's rows); τ is charged only for steps beyond it.
    #[serde(default)]
    pub chain_reference_steps: BTreeMap<String, f64>,
    /// Per `method/variant` ([`super::loop_residual::key`]): points `[rows, seconds]` of what
    /// the solver's untimed loop took per launch beyond the model's kernels in the
    /// calibration's solves (negative where it took less); absent in older profiles, which
    /// then add nothing.
    #[serde(default)]
    pub launch_residuals: BTreeMap<String, Vec<[f64; 2]>>,
}

/// Why a profile cannot be used. Every message ends with what to do.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error("no device profile at {0}: run `krylov calibrate` first")]
    NotFound(PathBuf),
    #[error(
        "cannot read the device profile {path}: {message}; run `krylov calibrate` to write a new one"
    )]
    Io { path: PathBuf, message: String },
    #[error(
        "the device profile {path} is not a valid profile ({message}); run `krylov calibrate` to replace it"
    )]
    Corrupt { path: PathBuf, message: String },
    #[error(
        "the device profile {path} has schema version {found}, this krylov reads version {expected}; run `krylov calibrate` to replace it"
    )]
    Schema {
        path: PathBuf,
        found: u32,
        expected: u32,
    },
    #[error(
        "the device profile {path} was measured on {profile}, not on this device {current}; run `krylov calibrate` on this device"
    )]
    ForeignDevice {
        path: PathBuf,
        profile: String,
        current: String,
    },
}

impl Profile {
    /// The layout parameters of this device's uploads with a padding budget.
    pub fn layout_params(&self, max_padding: f64) -> LayoutParams {
        LayoutParams {
            workgroup_size: self.workgroup_size,
            sell_c: self.sell_c,
            max_padding,
        }
    }

    /// The curve under `key` ([`super::kernels::curve_key`]), if calibrated.
    pub fn curve(&self, key: &str) -> Option<&Sigmoid> {
        self.kernels.get(key).map(|f| &f.curve)
    }

    /// γ of `format`'s gather excess (1 when not calibrated).
    pub fn gather_weight(&self, format: crate::base::Format) -> f64 {
        self.gather_weights
            .get(format.as_str())
            .copied()
            .unwrap_or(1.0)
    }

    /// γ of the excess of a product in `format` that gathers `vectors` vectors at each
    /// stored entry: fitted apart for fused CG's product (`"{format}:{vectors}"`, see
    /// [`super::gather::weight_key`]), `format`'s single-vector γ where the profile has none
    /// (one calibrated before the model described fused CG).
    pub fn gather_weight_for(&self, format: crate::base::Format, vectors: f64) -> f64 {
        self.gather_weights
            .get(&super::gather::weight_key(format.as_str(), vectors))
            .copied()
            .unwrap_or_else(|| self.gather_weight(format))
    }

    /// τ of `format` (0 when not calibrated).
    pub fn chain_step(&self, format: crate::base::Format) -> f64 {
        self.chain_step_seconds
            .get(format.as_str())
            .copied()
            .unwrap_or(0.0)
    }

    /// Seconds a product with A in `format` adds for a longest loop of `steps`:
    /// τ · (steps − the format's reference chain), never negative.
    pub fn chain_seconds(&self, format: crate::base::Format, steps: u64) -> f64 {
        self.chain_seconds_for(format, 1.0, steps)
    }

    /// The chain step τ of a product in `format` that gathers `vectors` vectors at each
    /// stored entry, and its reference chain: fitted apart for fused CG's product (each step
    /// of its longest loop makes three dependent loads; key `"{format}:{vectors}"`,
    /// [`super::gather::weight_key`]), the format's where the profile has none.
    pub fn chain_step_for(&self, format: crate::base::Format, vectors: f64) -> (f64, f64) {
        let own = super::gather::weight_key(format.as_str(), vectors);
        let key = if self.chain_step_seconds.contains_key(&own) {
            own
        } else {
            format.as_str().to_string()
        };
        (
            self.chain_step_seconds.get(&key).copied().unwrap_or(0.0),
            self.chain_reference_steps.get(&key).copied().unwrap_or(0.0),
        )
    }

    /// [`Self::chain_seconds`] of a product that gathers `vectors` vectors
    /// ([`Self::chain_step_for`]).
    pub fn chain_seconds_for(&self, format: crate::base::Format, vectors: f64, steps: u64) -> f64 {
        let (tau, reference) = self.chain_step_for(format, vectors);
        tau * (steps as f64 - reference).max(0.0)
    }

    /// Seconds per launch a `method`/`variant` loop on `rows` rows takes beyond the model's
    /// kernels ([`super::loop_residual::at`]; 0 when not calibrated).
    pub fn launch_residual(
        &self,
        method: crate::base::Method,
        variant: crate::base::Variant,
        rows: usize,
    ) -> f64 {
        self.launch_residuals
            .get(&super::loop_residual::key(method, variant))
            .map_or(0.0, |p| super::loop_residual::at(p, rows as f64))
    }

    /// `profile-<adapter>-<backend>.json`, the adapter's name reduced to `[a-z0-9-]`.
    pub fn file_name(device: &DeviceIdentity) -> String {
        let slug = |s: &str| {
            let mut out = String::new();
            for c in s.to_lowercase().chars() {
                if c.is_ascii_alphanumeric() {
                    out.push(c);
                } else if !out.ends_with('-') {
                    out.push('-');
                }
            }
            out.trim_matches('-').to_string()
        };
        format!(
            "profile-{}-{}.json",
            slug(&device.name),
            slug(&device.backend)
        )
    }

    /// Writes the profile as pretty JSON, creating the directory.
    pub fn save(&self, path: &Path) -> Result<(), ProfileError> {
        let io = |e: std::io::Error| ProfileError::Io {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let text = serde_json::to_string_pretty(self).expect("a profile serialises");
        std::fs::write(path, text).map_err(io)
    }

    /// Reads a profile and checks its schema version and curves (not the device: see
    /// [`Profile::load_for`]).
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(ProfileError::NotFound(path.to_path_buf()));
            }
            Err(e) => {
                return Err(ProfileError::Io {
                    path: path.to_path_buf(),
                    message: e.to_string(),
                });
            }
        };
        let corrupt = |message: String| ProfileError::Corrupt {
            path: path.to_path_buf(),
            message,
        };
        let value: serde_json::Value =
            serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
        let found = value.get("schema_version").and_then(|v| v.as_u64());
        match found {
            Some(v) if v == SCHEMA_VERSION as u64 => {}
            Some(v) => {
                return Err(ProfileError::Schema {
                    path: path.to_path_buf(),
                    found: v.min(u32::MAX as u64) as u32,
                    expected: SCHEMA_VERSION,
                });
            }
            None => return Err(corrupt("no schema_version".into())),
        }
        let profile: Profile = serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))?;
        if profile.kernels.is_empty() {
            return Err(corrupt("no kernel curves".into()));
        }
        for (name, fit) in &profile.kernels {
            if !fit.curve.is_valid() {
                return Err(corrupt(format!("the {name} curve has invalid parameters")));
            }
        }
        let costs: Vec<f64> = [
            profile.dispatch_seconds,
            profile.round_trip_seconds,
            profile.timestamp_overhead_seconds,
        ]
        .into_iter()
        .chain(profile.constants.values().copied())
        .chain(profile.gather_weights.values().copied())
        .chain(profile.chain_step_seconds.values().copied())
        .chain(profile.chain_reference_steps.values().copied())
        .collect();
        if costs.iter().any(|c| !c.is_finite() || *c < 0.0) || profile.workgroup_size == 0 {
            return Err(corrupt("negative or missing costs".into()));
        }
        // Residuals may be negative; rows must be positive and both finite.
        let residual_ok = |p: &[f64; 2]| p[0].is_finite() && p[0] > 0.0 && p[1].is_finite();
        if !profile.launch_residuals.values().flatten().all(residual_ok) {
            return Err(corrupt("invalid launch residuals".into()));
        }
        Ok(profile)
    }

    /// [`Profile::load`], then rejects a profile of another device or driver than `current`.
    pub fn load_for(path: &Path, current: &DeviceIdentity) -> Result<Profile, ProfileError> {
        let p = Profile::load(path)?;
        if &p.device != current {
            return Err(ProfileError::ForeignDevice {
                path: path.to_path_buf(),
                profile: p.device.to_string(),
                current: current.to_string(),
            });
        }
        Ok(p)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::store::utc_string;
    use super::*;
    use crate::model::sigmoid::Sample;

    pub(crate) fn identity() -> DeviceIdentity {
        DeviceIdentity {
            name: "llvmpipe (LLVM 15.0.6, 256 bits)".into(),
            vendor: 0x10005,
            device: 0,
            backend: "Vulkan".into(),
            driver: "llvmpipe".into(),
            driver_info: "Mesa 22.3.6".into(),
        }
    }

    fn fit(nu: f64) -> Fit {
        Fit {
            curve: Sigmoid {
                mu: 18.0,
                sigma: 1.5,
                nu,
            },
            rms_relative_error: 0.05,
            max_relative_error: 0.1,
            samples: vec![Sample {
                bytes: 4096.0,
                seconds: 1e-5,
            }],
            outliers: Vec::new(),
        }
    }

    /// A profile with made-up but valid numbers.
    pub(crate) fn sample_profile() -> Profile {
        Profile {
            schema_version: SCHEMA_VERSION,
            device: identity(),
            created: utc_string(0),
            quick: true,
            workgroup_size: 256,
            sell_c: 8,
            max_binding_bytes: 1 << 30,
            dispatch_seconds: 5e-6,
            timestamp_overhead_seconds: 0.0,
            round_trip_seconds: 50e-6,
            kernels: ["update_cg", "dot", "axpy", "xpay"]
                .iter()
                .map(|k| (k.to_string(), fit(20e9)))
                .chain(
                    crate::model::layout::MODEL_FORMATS
                        .iter()
                        .enumerate()
                        .flat_map(|(i, f)| {
                            ["spmv", "spmv_dot_cg"]
                                .map(|k| (format!("{k}:{}", f.as_str()), fit(5e9 + i as f64 * 1e9)))
                        }),
                )
                .collect(),
            constants: [("dot_finish".to_string(), 3e-6)].into(),
            gather_weights: BTreeMap::new(),
            chain_step_seconds: [("csr".to_string(), 0.2e-6)].into(),
            chain_reference_steps: [("csr".to_string(), 5.0)].into(),
            launch_residuals: BTreeMap::new(),
        }
    }

    fn temp(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("krylov-profile-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir.join(name)
    }

    #[test]
    fn a_profile_round_trips_through_its_file() {
        let p = sample_profile();
        let path = temp("round.json");
        p.save(&path).unwrap();
        assert_eq!(Profile::load(&path).unwrap(), p);
        assert_eq!(Profile::load_for(&path, &identity()).unwrap(), p);
        assert_eq!(p.chain_step(crate::base::Format::Csr), 0.2e-6);
        assert_eq!(p.chain_step(crate::base::Format::Ell), 0.0);
        // Charged beyond the reference chain of 5 only.
        let close = |a: f64, b: f64| (a - b).abs() < 1e-18;
        assert!(close(
            p.chain_seconds(crate::base::Format::Csr, 25),
            20.0 * 0.2e-6
        ));
        assert_eq!(p.chain_seconds(crate::base::Format::Csr, 3), 0.0);
        assert_eq!(p.chain_seconds(crate::base::Format::Ell, 100), 0.0);
        // A profile written before the chain term loads, without one.
        let mut v = serde_json::to_value(&p).unwrap();
        v.as_object_mut().unwrap().remove("chain_step_seconds");
        v.as_object_mut().unwrap().remove("chain_reference_steps");
        std::fs::write(&path, v.to_string()).unwrap();
        let old = Profile::load(&path).unwrap();
        assert_eq!(old.chain_step(crate::base::Format::Csr), 0.0);
    }

    #[test]
    fn corrupt_old_and_foreign_profiles_are_rejected_with_advice() {
        let path = temp("bad.json");
        std::fs::write(&path, "{ not json").unwrap();
        let e = Profile::load(&path).unwrap_err();
        assert!(matches!(e, ProfileError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("run `krylov calibrate`"), "{e}");

        let mut v = serde_json::to_value(sample_profile()).unwrap();
        v["schema_version"] = 99.into();
        std::fs::write(&path, v.to_string()).unwrap();
        let e = Profile::load(&path).unwrap_err();
        assert!(matches!(e, ProfileError::Schema { found: 99, .. }), "{e}");

        let mut v = serde_json::to_value(sample_profile()).unwrap();
        v["kernels"]["axpy"]["curve"]["sigma"] = (-1.0).into();
        std::fs::write(&path, v.to_string()).unwrap();
        let e = Profile::load(&path).unwrap_err();
        assert!(e.to_string().contains("axpy curve has invalid"), "{e}");

        let mut v = serde_json::to_value(sample_profile()).unwrap();
        v.as_object_mut().unwrap().remove("kernels");
        std::fs::write(&path, v.to_string()).unwrap();
        assert!(matches!(
            Profile::load(&path).unwrap_err(),
            ProfileError::Corrupt { .. }
        ));

        sample_profile().save(&path).unwrap();
        let other = DeviceIdentity {
            driver_info: "Mesa 24.0".into(),
            ..identity()
        };
        let e = Profile::load_for(&path, &other).unwrap_err();
        assert!(matches!(e, ProfileError::ForeignDevice { .. }), "{e}");
        let text = e.to_string();
        assert!(
            text.contains("Mesa 22.3.6") && text.contains("Mesa 24.0"),
            "{text}"
        );
        assert!(
            text.contains("run `krylov calibrate` on this device"),
            "{text}"
        );

        // A negative chain step is no cost.
        let mut v = serde_json::to_value(sample_profile()).unwrap();
        v["chain_step_seconds"]["csr"] = (-1e-7).into();
        std::fs::write(&path, v.to_string()).unwrap();
        let e = Profile::load(&path).unwrap_err();
        assert!(e.to_string().contains("negative or missing costs"), "{e}");

        let e = Profile::load(&temp("missing.json")).unwrap_err();
        assert!(matches!(e, ProfileError::NotFound(_)), "{e}");
    }

    #[test]
    fn the_app_finds_the_profile_of_its_adapter_by_summary() {
        let dir = temp("by-summary");
        let p = sample_profile();
        p.save(&dir.parent().unwrap().join(Profile::file_name(&p.device)))
            .unwrap();
        let dir = dir.parent().unwrap();
        let (name, backend) = ("llvmpipe (LLVM 15.0.6, 256 bits)", "Vulkan");
        let found = find_for_adapter_in(dir, name, backend, "llvmpipe Mesa 22.3.6").unwrap();
        assert_eq!(found.unwrap().0, p);
        let e = find_for_adapter_in(dir, name, backend, "llvmpipe Mesa 24.0").unwrap_err();
        assert!(matches!(e, ProfileError::ForeignDevice { .. }), "{e}");
        assert!(
            find_for_adapter_in(dir, "another GPU", backend, "x")
                .unwrap()
                .is_none()
        );
    }

    #[test]
    fn file_names_and_dates() {
        assert_eq!(
            Profile::file_name(&identity()),
            "profile-llvmpipe-llvm-15-0-6-256-bits-vulkan.json"
        );
        assert_eq!(utc_string(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc_string(1_795_654_800), "2026-11-26T01:00:00Z");
        assert_eq!(utc_string(951_782_400), "2000-02-29T00:00:00Z");
    }

    #[test]
    fn a_fused_product_has_its_own_gather_weight_and_chain_step_or_its_formats() {
        use crate::base::Format;
        let mut p = sample_profile();
        p.gather_weights.clear();
        assert_eq!(p.gather_weight_for(Format::Ell, 3.0), 1.0);
        p.gather_weights.insert("ell".into(), 0.1);
        assert_eq!(p.gather_weight_for(Format::Ell, 3.0), 0.1);
        p.gather_weights.insert("ell:3".into(), 0.9);
        assert_eq!(p.gather_weight_for(Format::Ell, 3.0), 0.9);
        assert_eq!(p.gather_weight_for(Format::Ell, 1.0), 0.1);
        assert_eq!(p.gather_weight(Format::Ell), 0.1);
        // The chain step likewise: the format's until fused CG's own is fitted.
        p.chain_step_seconds.insert("ell".into(), 1e-7);
        p.chain_reference_steps.insert("ell".into(), 5.0);
        assert_eq!(p.chain_step_for(Format::Ell, 3.0), (1e-7, 5.0));
        assert!((p.chain_seconds_for(Format::Ell, 3.0, 15) - 1e-6).abs() < 1e-18);
        p.chain_step_seconds.insert("ell:3".into(), 3e-7);
        p.chain_reference_steps.insert("ell:3".into(), 7.0);
        assert_eq!(p.chain_step_for(Format::Ell, 3.0), (3e-7, 7.0));
        assert!((p.chain_seconds_for(Format::Ell, 3.0, 17) - 3e-6).abs() < 1e-18);
        assert!((p.chain_seconds(Format::Ell, 15) - 1e-6).abs() < 1e-18);
    }
}
