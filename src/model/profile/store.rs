//! Where profiles live and how one is found: the profile directory (`$KRYLOV_PROFILE_DIR`
//! or the user's cache directory), the default path of a device's profile, the lookup by an
//! adapter's summary (the app's), and the UTC date a profile records.

use std::path::{Path, PathBuf};

use super::{DeviceIdentity, PROFILE_DIR_ENV, Profile, ProfileError};

/// The directory profiles live in: `$KRYLOV_PROFILE_DIR`, else the user's cache directory
/// (`None` when neither exists, e.g. no home directory).
pub fn profile_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(PROFILE_DIR_ENV).filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    directories::ProjectDirs::from("", "", "krylov-wgpu").map(|d| d.cache_dir().to_path_buf())
}

/// Where the profile of `device` is stored by default.
pub fn default_profile_path(device: &DeviceIdentity) -> Option<PathBuf> {
    profile_dir().map(|d| d.join(Profile::file_name(device)))
}

/// The default profile of an adapter known only by its summary (name, backend and the
/// `"driver driver_info"` string of [`crate::gpu::AdapterSummary`]), as the app knows it:
/// `Ok(None)` when there is none, an error when it cannot be used.
pub fn find_for_adapter(
    name: &str,
    backend: &str,
    driver: &str,
) -> Result<Option<(Profile, PathBuf)>, ProfileError> {
    match profile_dir() {
        Some(dir) => find_for_adapter_in(&dir, name, backend, driver),
        None => Ok(None),
    }
}

/// [`find_for_adapter`] in the directory `dir`.
pub fn find_for_adapter_in(
    dir: &Path,
    name: &str,
    backend: &str,
    driver: &str,
) -> Result<Option<(Profile, PathBuf)>, ProfileError> {
    let probe = DeviceIdentity {
        name: name.into(),
        vendor: 0,
        device: 0,
        backend: backend.into(),
        driver: String::new(),
        driver_info: String::new(),
    };
    let path = dir.join(Profile::file_name(&probe));
    let p = match Profile::load(&path) {
        Ok(p) => p,
        Err(ProfileError::NotFound(_)) => return Ok(None),
        Err(e) => return Err(e),
    };
    let theirs = format!("{} {}", p.device.driver, p.device.driver_info);
    if p.device.name != name || p.device.backend != backend || theirs.trim() != driver {
        return Err(ProfileError::ForeignDevice {
            path,
            profile: p.device.to_string(),
            current: format!("{name} ({backend}, driver {driver})"),
        });
    }
    Ok(Some((p, path)))
}

/// Now, as `YYYY-MM-DDTHH:MM:SSZ` (UTC; days from the civil calendar algorithm of
/// H. Hinnant).
pub fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    utc_string(secs)
}

pub(super) fn utc_string(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}
