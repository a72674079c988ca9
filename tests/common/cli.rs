//! Running the `krylov` binary: a private runtime directory, scratch directories, and [`Run`]
//! with the checks on its exit code and output.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::Value;

/// A private (0700) runtime directory for the child processes, so the Vulkan loader does not
/// complain about a missing or foreign `XDG_RUNTIME_DIR`.
pub fn runtime_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("cli-xdg-runtime-{}", std::process::id()));
        fs::create_dir_all(&dir).expect("create runtime dir");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700)).expect("chmod 0700");
        }
        dir
    })
}

/// A fresh empty directory for one test's files.
pub fn temp_dir(tag: &str) -> PathBuf {
    static COUNTER: AtomicUsize = AtomicUsize::new(0);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
        "cli-{tag}-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).expect("create temp dir");
    dir
}

/// Path of a file in tests/data, as a string for the command line.
pub fn data_arg(name: &str) -> String {
    path_str(&super::data(name))
}

pub fn path_str(p: &Path) -> String {
    p.display().to_string()
}

/// Writes `text` to `dir/name`; returns the path for the command line.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    fs::write(&path, text).expect("write fixture");
    path_str(&path)
}

/// What a run of `krylov` produced.
pub struct Run {
    pub args: String,
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    pub fn context(&self) -> String {
        format!(
            "`krylov {}` exited with {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.args, self.code, self.stdout, self.stderr
        )
    }

    pub fn assert_code(&self, code: i32) -> &Self {
        assert_eq!(self.code, Some(code), "wrong exit code\n{}", self.context());
        self
    }

    /// stdout parsed as exactly one JSON value on one line.
    pub fn json(&self) -> Value {
        let text = self.stdout.trim_end_matches('\n');
        assert!(!text.is_empty(), "no JSON on stdout\n{}", self.context());
        assert_eq!(
            text.lines().count(),
            1,
            "JSON must be one line\n{}",
            self.context()
        );
        serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("stdout is not JSON ({e})\n{}", self.context()))
    }

    /// Exit code 1, nothing on stdout, and exactly one stderr line `error: ...` containing
    /// every one of `needles` (case-insensitive).
    pub fn assert_input_error(&self, needles: &[&str]) {
        self.assert_code(1);
        assert!(
            self.stdout.is_empty(),
            "stdout must be empty on error\n{}",
            self.context()
        );
        self.assert_one_error_line(needles);
    }

    pub fn assert_one_error_line(&self, needles: &[&str]) {
        let lines: Vec<&str> = self.stderr.lines().collect();
        assert_eq!(
            lines.len(),
            1,
            "stderr must be exactly one line\n{}",
            self.context()
        );
        assert!(
            lines[0].starts_with("error: "),
            "stderr must start with `error: `\n{}",
            self.context()
        );
        assert!(
            !self.stderr.contains("panicked"),
            "the CLI panicked\n{}",
            self.context()
        );
        let lower = lines[0].to_lowercase();
        for needle in needles {
            assert!(
                lower.contains(&needle.to_lowercase()),
                "stderr should mention `{needle}`\n{}",
                self.context()
            );
        }
    }
}

/// The arguments of a command line: `line` split at white space (no quoting).
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs `krylov` with the arguments of a command line (see [`words`]).
pub fn krylov_line(line: &str) -> Run {
    krylov(&words(line))
}

/// An empty directory for device profiles: `krylov` never reads or writes the user's cache
/// in tests (a profile there would change what `--format auto` picks).
pub fn no_profiles_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| temp_dir("no-profiles"))
}

/// Runs `krylov args...` with a private XDG_RUNTIME_DIR and an empty profile directory.
pub fn krylov(args: &[&str]) -> Run {
    krylov_env(args, &[])
}

/// [`krylov`] with extra environment variables (`KRYLOV_PROFILE_DIR` among them overrides
/// the empty profile directory).
pub fn krylov_env(args: &[&str], envs: &[(&str, &str)]) -> Run {
    krylov_env_within(args, envs, 120)
}

/// [`krylov_env`] killed after `seconds` (not 120): for commands whose work is long by
/// design on a 2-core lavapipe machine, such as `krylov calibrate --quick`.
pub fn krylov_env_within(args: &[&str], envs: &[(&str, &str)], seconds: u64) -> Run {
    let mut cmd = assert_cmd::Command::cargo_bin("krylov").expect("the krylov binary is built");
    cmd.env("KRYLOV_PROFILE_DIR", no_profiles_dir());
    for (k, v) in envs {
        cmd.env(k, v);
    }
    let output = cmd
        .args(args)
        .env("XDG_RUNTIME_DIR", runtime_dir())
        .timeout(std::time::Duration::from_secs(seconds))
        .output()
        .expect("run krylov");
    Run {
        args: args.join(" "),
        code: output.status.code(),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}
