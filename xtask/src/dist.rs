//! `cargo xtask dist`: every artifact of a release in one folder, built once.
//!
//! Into `--out` (default `target/dist/`):
//!
//! - `harness-VERSION-x86_64-unknown-linux-gnu.tar.gz` (the release `harness` and the README)
//!   and its `.sha256`;
//! - `npm/harness-agents-VERSION.tgz` and `npm/harness-agents-linux-x64-VERSION.tgz`, the
//!   packages `npm/scripts/stage.mjs` lays out, packed by `npm pack`, the platform one around
//!   that same binary;
//! - `wheels/harness_agents-VERSION-cp310-abi3-manylinux2014_x86_64.manylinux_2_17_x86_64.whl`
//!   (maturin, one abi3 wheel for CPython 3.10 and later);
//! - `crates/harness-agents*-VERSION.crate`, the ten library crates as `cargo package` makes
//!   them;
//! - `SHA256SUMS` of every file above.
//!
//! The binary and the wheel's library are linked against glibc 2.17 (`manylinux2014`: Ubuntu
//! 14.04 and later, Debian 8, RHEL 7) by Zig: the binary with `cargo zigbuild`, the wheel with
//! maturin's `--zig`, so they run on every glibc Linux still maintained. Each is checked: the
//! highest `GLIBC_` symbol version `objdump -T` lists must be at most 2.17. Needs `cargo
//! zigbuild`, `maturin`, Zig (`zig` on `PATH` or Python's `ziglang` package), `node`, `npm`,
//! `objdump`, `tar` and `sha256sum`; `.ci/run` installs the first three.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::{root, target_dir};

/// The target every artifact is built for.
const TARGET: &str = "x86_64-unknown-linux-gnu";

/// The npm platform of [`TARGET`].
const NPM_PLATFORM: &str = "linux-x64";

/// The library crates, in the order `cargo package` takes them.
const CRATES: [&str; 11] = [
    "harness-agents-codex-shell",
    "harness-agents-core",
    "harness-agents-claude",
    "harness-agents-codex",
    "harness-agents-opencode",
    "harness-agents-acp",
    "harness-agents-gemini",
    "harness-agents-pi",
    "harness-agents-qwen",
    "harness-agents-copilot",
    "harness-agents",
];

/// The options of `cargo xtask dist`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The folder the artifacts go to (emptied first) [default: target/dist].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The newest glibc the binary and the wheel may need.
    #[arg(long, value_name = "VERSION", default_value = "2.17")]
    glibc: String,
}

/// Builds every artifact of a release into `args.out`.
pub fn dist(args: Args) -> Result<()> {
    let version = env!("CARGO_PKG_VERSION");
    let target = target_dir();
    let out = args.out.unwrap_or_else(|| target.join("dist"));
    let glibc = parse_glibc(&args.glibc)
        .with_context(|| format!("--glibc {}: not a version such as 2.17", args.glibc))?;
    for tool in [
        "cargo-zigbuild",
        "maturin",
        "node",
        "npm",
        "objdump",
        "tar",
        "sha256sum",
    ] {
        if which(tool).is_none() {
            bail!(
                "{tool} is not on PATH: `cargo xtask dist` needs cargo-zigbuild (cargo install \
                 --locked cargo-zigbuild), maturin and Zig (pip install maturin ziglang), node \
                 and npm, objdump, tar and sha256sum"
            );
        }
    }
    if out.exists() {
        std::fs::remove_dir_all(&out).with_context(|| format!("emptying {}", out.display()))?;
    }
    std::fs::create_dir_all(&out)?;
    let out = out.canonicalize()?;

    let binary = step("release binary (cargo zigbuild)", || {
        build_binary(&target, &args.glibc)
    })?;
    check_glibc(&binary, glibc)?;
    step("binary tarball", || tarball(&binary, &out, version))?;
    step("npm packages", || npm_packages(&binary, &out))?;
    step("wheel (maturin --zig)", || wheel(&out, &target, glibc))?;
    step("crate packages", || crates(&out, &target, version))?;
    checksums(&out)?;
    println!("dist: every artifact is in {}", out.display());
    Ok(())
}

/// Runs `command`, in the workspace's root unless it names a folder; fails unless it succeeds.
fn status(command: &mut Command) -> Result<()> {
    if command.get_current_dir().is_none() {
        command.current_dir(root());
    }
    let shown = format!("{command:?}");
    let status = command
        .status()
        .with_context(|| format!("running {shown}"))?;
    if !status.success() {
        bail!("{shown} failed: {status}");
    }
    Ok(())
}

/// Runs one step, saying what and how long it took.
fn step<T>(name: &str, run: impl FnOnce() -> Result<T>) -> Result<T> {
    println!("== dist: {name}");
    let started = Instant::now();
    let result = run().with_context(|| format!("dist: {name}"))?;
    println!(
        "== dist: {name} took {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(result)
}

/// `harness` in the release profile for [`TARGET`] against `glibc`; its path.
fn build_binary(target: &Path, glibc: &str) -> Result<PathBuf> {
    status(Command::new("cargo").args([
        "zigbuild",
        "--release",
        "--locked",
        "-p",
        "harness-cli",
        "--target",
        &format!("{TARGET}.{glibc}"),
    ]))?;
    Ok(target.join(TARGET).join("release").join("harness"))
}

/// The release tarball: `harness-VERSION-TARGET/` with the binary and the README, and the
/// tarball's `.sha256` beside it.
fn tarball(binary: &Path, out: &Path, version: &str) -> Result<()> {
    let name = format!("harness-{version}-{TARGET}");
    let staging = tempfile::tempdir()?;
    let dir = staging.path().join(&name);
    std::fs::create_dir_all(&dir)?;
    std::fs::copy(binary, dir.join("harness"))?;
    std::fs::copy(root().join("README.md"), dir.join("README.md"))?;
    let tarball = format!("{name}.tar.gz");
    // Reproducible: sorted names, no owner, the last commit's time on every file.
    let mtime = last_commit_time().unwrap_or_else(|| "@0".to_string());
    status(
        Command::new("tar")
            .args([
                "--sort=name",
                "--owner=0",
                "--group=0",
                "--numeric-owner",
                &format!("--mtime={mtime}"),
                "-czf",
            ])
            .arg(out.join(&tarball))
            .arg("-C")
            .arg(staging.path())
            .arg(&name),
    )?;
    let sum = sha256(out, &[tarball.as_str()])?;
    std::fs::write(out.join(format!("{tarball}.sha256")), sum)?;
    Ok(())
}

/// `@SECONDS` of the last commit, for the tarball's file times.
fn last_commit_time() -> Option<String> {
    let output = Command::new("git")
        .args(["log", "-1", "--format=%ct"])
        .current_dir(root())
        .output()
        .ok()?;
    let text = String::from_utf8(output.stdout).ok()?;
    let seconds = text.trim();
    (output.status.success() && !seconds.is_empty()).then(|| format!("@{seconds}"))
}

/// The main npm package and this platform's, around `binary`, packed into `out/npm/`.
fn npm_packages(binary: &Path, out: &Path) -> Result<()> {
    let npm = root().join("npm");
    if !npm.join("node_modules").is_dir() {
        status(
            Command::new("npm")
                .args(["ci", "--no-audit", "--no-fund"])
                .current_dir(&npm),
        )?;
    }
    status(Command::new("npm").args(["run", "build"]).current_dir(&npm))?;
    let staging = tempfile::tempdir()?;
    status(
        Command::new("node")
            .arg("scripts/stage.mjs")
            .arg("--out")
            .arg(staging.path())
            .arg("--binary")
            .arg(binary)
            .args(["--platform", NPM_PLATFORM])
            .current_dir(&npm),
    )?;
    let packed = out.join("npm");
    std::fs::create_dir_all(&packed)?;
    for entry in std::fs::read_dir(staging.path())? {
        let dir = entry?.path();
        status(
            Command::new("npm")
                .args(["pack", "--silent", "--pack-destination"])
                .arg(&packed)
                .current_dir(&dir),
        )?;
    }
    Ok(())
}

/// The abi3 wheel, `manylinux2014` (glibc 2.17) by maturin's `--zig`, into `out/wheels/`;
/// its library's glibc checked.
fn wheel(out: &Path, target: &Path, glibc: (u32, u32)) -> Result<()> {
    let wheels = out.join("wheels");
    let compatibility = format!("manylinux_{}_{}", glibc.0, glibc.1);
    status(
        Command::new("maturin")
            .args([
                "build",
                "--release",
                "--locked",
                "--zig",
                "--manifest-path",
                "harness-python/Cargo.toml",
                "--target",
                TARGET,
                "--compatibility",
                &compatibility,
                "--out",
            ])
            .arg(&wheels)
            // A folder of its own: maturin's and cargo-zigbuild's builds for the same target set
            // different variables, and in one folder each would rebuild the other's every time.
            .env("CARGO_TARGET_DIR", target.join("dist-wheel")),
    )?;
    for entry in std::fs::read_dir(&wheels)? {
        let wheel = entry?.path();
        let unpacked = tempfile::tempdir()?;
        status(
            Command::new("python3")
                .args(["-m", "zipfile", "-e"])
                .arg(&wheel)
                .arg(unpacked.path()),
        )?;
        let libraries = find_files(unpacked.path(), ".so")?;
        if libraries.is_empty() {
            bail!("{} holds no library", wheel.display());
        }
        for library in libraries {
            check_glibc(&library, glibc)?;
        }
    }
    Ok(())
}

/// The library crates' packages, as crates.io will build them, into `out/crates/`. Verified
/// by `.ci/run`'s own `cargo package` step; here only packed.
fn crates(out: &Path, target: &Path, version: &str) -> Result<()> {
    let packages = target.join("package-dist");
    let mut command = Command::new("cargo");
    command.args(["package", "--locked", "--no-verify"]);
    for name in CRATES {
        command.args(["-p", name]);
    }
    status(command.env("CARGO_TARGET_DIR", &packages))?;
    let dir = out.join("crates");
    std::fs::create_dir_all(&dir)?;
    for name in CRATES {
        let file = format!("{name}-{version}.crate");
        std::fs::copy(packages.join("package").join(&file), dir.join(&file))
            .with_context(|| format!("copying {file}"))?;
    }
    Ok(())
}

/// `SHA256SUMS`: every artifact's checksum, by its path under `out`.
fn checksums(out: &Path) -> Result<()> {
    let mut files: Vec<String> = find_files(out, "")?
        .iter()
        .filter_map(|p| p.strip_prefix(out).ok())
        .map(|p| p.display().to_string())
        .filter(|p| !p.ends_with(".sha256"))
        .collect();
    files.sort();
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let sums = sha256(out, &refs)?;
    std::fs::write(out.join("SHA256SUMS"), &sums)?;
    print!("{sums}");
    Ok(())
}

/// `sha256sum` of `files`, run in `dir`: its lines.
fn sha256(dir: &Path, files: &[&str]) -> Result<String> {
    let output = Command::new("sha256sum")
        .args(files)
        .current_dir(dir)
        .output()
        .context("running sha256sum")?;
    if !output.status.success() {
        bail!(
            "sha256sum failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8(output.stdout)?)
}

/// The files under `dir` whose names end with `suffix`, recursively.
fn find_files(dir: &Path, suffix: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            found.extend(find_files(&path, suffix)?);
        } else if path.to_string_lossy().ends_with(suffix) {
            found.push(path);
        }
    }
    Ok(found)
}

/// Fails unless every `GLIBC_` symbol version `path` needs is at most `newest`.
pub fn check_glibc(path: &Path, newest: (u32, u32)) -> Result<()> {
    let output = Command::new("objdump")
        .arg("-T")
        .arg(path)
        .output()
        .context("running objdump -T")?;
    if !output.status.success() {
        bail!(
            "objdump -T {} failed: {}",
            path.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let needed = highest_glibc(&String::from_utf8_lossy(&output.stdout));
    let shown = |(major, minor): (u32, u32)| format!("{major}.{minor}");
    match needed {
        Some(needed) if needed > newest => bail!(
            "{} needs glibc {} (at most {} allowed)",
            path.display(),
            shown(needed),
            shown(newest)
        ),
        Some(needed) => println!(
            "dist: {} needs glibc {} at most",
            path.display(),
            shown(needed)
        ),
        None => println!("dist: {} needs no glibc symbol version", path.display()),
    }
    Ok(())
}

/// The highest `GLIBC_MAJOR.MINOR[.PATCH]` in `objdump -T`'s text (patch levels do not raise
/// the glibc a binary needs beyond their minor release).
fn highest_glibc(text: &str) -> Option<(u32, u32)> {
    text.split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter_map(|word| word.strip_prefix("GLIBC_"))
        .filter_map(parse_glibc)
        .max()
}

/// `2.17` (or `2.3.4`, read as 2.3) as numbers.
fn parse_glibc(text: &str) -> Option<(u32, u32)> {
    let mut parts = text.split('.');
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

/// `name` on `PATH`.
fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_highest_glibc_of_objdump_output() {
        let text = "\
0000000000000000      DF *UND*	0000000000000000 (GLIBC_2.2.5) memcpy
0000000000000000      DF *UND*	0000000000000000 (GLIBC_2.17) clock_gettime
0000000000000000      DF *UND*	0000000000000000  GLIBC_2.3.4 __sprintf_chk
0000000000000000  w   D  *UND*	0000000000000000  GLIBC_PRIVATE __libc_x
";
        assert_eq!(highest_glibc(text), Some((2, 17)));
        assert_eq!(
            highest_glibc("(GLIBC_2.34) __libc_start_main"),
            Some((2, 34))
        );
        assert_eq!(highest_glibc("no versions"), None);
        assert!((2, 34) > (2, 17) && (2, 9) < (2, 17));
    }
}
