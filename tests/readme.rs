//! The README's promises to a newcomer, checked against what the binary prints: the
//! sample output under "Two commands" is exactly the main command's stdout (piped, no
//! colour), line for line, up to the README's "(followed by ...)" line.

mod common;

/// The lines of the README's fenced block that follows "The first command prints",
/// without the closing "(followed by ...)" line that stands for the rest.
fn readme_sample_output() -> Vec<String> {
    let readme = std::fs::read_to_string(common::repo_path("README.md")).unwrap();
    let after = readme
        .split_once("The first command prints")
        .expect("README: no \"The first command prints\" paragraph")
        .1;
    let block = after
        .split_once("```\n")
        .expect("README: no code block after the first command")
        .1
        .split_once("```")
        .expect("README: the sample output block is not closed")
        .0;
    let lines: Vec<String> = block.lines().map(str::to_owned).collect();
    let (last, shown) = lines.split_last().expect("README: empty sample output");
    assert!(
        last.starts_with("(followed by"),
        "README: the sample output should end with a \"(followed by ...)\" line, not {last:?}"
    );
    shown.to_vec()
}

#[test]
fn the_readmes_sample_output_is_what_the_main_command_prints() {
    let sample = readme_sample_output();
    let output_dir = tempfile::tempdir().unwrap();
    let output = common::command()
        .args(["run", "--output-dir"])
        .arg(output_dir.path())
        .env_remove("COLUMNS")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let stdout = String::from_utf8(output.stdout).unwrap();
    let printed: Vec<&str> = stdout.lines().take(sample.len()).collect();
    assert_eq!(
        printed, sample,
        "README.md's sample output differs from `hyde-eval run`'s stdout:\n{stdout}"
    );
    // The README says what follows the table: the per-tag table and the HyDE accounting.
    let rest: Vec<&str> = stdout.lines().skip(sample.len()).collect();
    assert!(
        rest.iter().any(|line| line.contains("by query tag")),
        "{stdout}"
    );
    assert!(
        rest.iter()
            .any(|line| line.contains("fallback (no hypothesis)")),
        "{stdout}"
    );
}
