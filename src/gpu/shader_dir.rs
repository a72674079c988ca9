//! `KRYLOV_SHADER_DIR`: kernels compiled from files instead of the text built into the
//! binary, for kernel experiments on a GPU machine without a toolchain (bench/NOTES.md, run 11).

use super::shader::KernelSource;
use crate::base::error::{KrylovError, Result};

/// `KRYLOV_SHADER_DIR=DIR` (for kernel experiments, e.g. on a GPU machine without a
/// toolchain): a kernel whose file `DIR/<folder>/<name>.wgsl` exists is compiled from that
/// file instead of the text built into the binary (library pieces are not overridden). Each
/// overridden kernel's text is leaked once per compilation, which the engine caches.
pub(super) fn shader_override(source: &KernelSource) -> Result<Option<KernelSource>> {
    let dir = std::env::var_os("KRYLOV_SHADER_DIR").filter(|d| !d.is_empty());
    shader_override_in(dir.as_deref().map(std::path::Path::new), source)
}

/// [`shader_override`] from `dir` (`None`: no override).
fn shader_override_in(
    dir: Option<&std::path::Path>,
    source: &KernelSource,
) -> Result<Option<KernelSource>> {
    let Some(dir) = dir else {
        return Ok(None);
    };
    let path = dir
        .join(source.folder)
        .join(format!("{}.wgsl", source.name));
    if !path.exists() {
        return Ok(None);
    }
    let text = std::fs::read_to_string(&path).map_err(|e| {
        KrylovError::InvalidOption(format!(
            "KRYLOV_SHADER_DIR: cannot read {}: {e}",
            path.display()
        ))
    })?;
    Ok(Some(KernelSource {
        source: Box::leak(text.into_boxed_str()),
        ..*source
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gpu::shader::KERNELS;

    #[test]
    fn a_shader_dir_overrides_the_kernels_it_holds_and_no_other() {
        let dir = std::env::temp_dir().join(format!("krylov-shader-dir-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("gmres")).unwrap();
        std::fs::write(dir.join("gmres/gmres_normalize.wgsl"), "// replaced\n").unwrap();
        // A directory where the file should be: unreadable, a clear error.
        std::fs::create_dir_all(dir.join("cg/update_cg.wgsl")).unwrap();
        let find = |name: &str| *KERNELS.iter().find(|k| k.name == name).unwrap();
        let normalize = find("gmres_normalize");
        let replaced = shader_override_in(Some(&dir), &normalize).unwrap().unwrap();
        assert_eq!(replaced.source, "// replaced\n");
        assert_eq!(replaced.name, normalize.name);
        assert_eq!(replaced.pieces, normalize.pieces);
        assert!(
            shader_override_in(Some(&dir), &find("gmres_gs_update"))
                .unwrap()
                .is_none()
        );
        assert!(shader_override_in(None, &normalize).unwrap().is_none());
        let e = shader_override_in(Some(&dir), &find("update_cg")).unwrap_err();
        assert!(e.to_string().contains("update_cg.wgsl"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
