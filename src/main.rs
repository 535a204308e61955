//! The `hyde-eval` binary: parse the command line, run the command, map errors to the
//! documented exit codes (see `hyde-eval run --help`); SIGINT and SIGTERM exit with 130
//! and 143 after removing unfinished outputs (see `interrupt`).

use std::process::ExitCode;

/// std's `eprintln!`, as the library shadows it: one write per line through
/// `hyde_eval::console`, and a closed stderr is no panic (which would exit with 101).
macro_rules! eprintln {
    ($($argument:tt)*) => {
        hyde_eval::console::stderr_line(format_args!($($argument)*))
    };
}

use hyde_eval::cli::{BaselineAction, CacheAction, Cli, Command, EngineAction, ModelsAction};
use hyde_eval::commands;

fn main() -> ExitCode {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    require_x86_64_v3();
    let cli = Cli::from_command_line();
    hyde_eval::progress::start();
    if let Err(error) = hyde_eval::interrupt::install() {
        eprintln!("warning: cannot install the SIGINT/SIGTERM handler: {error}");
    }
    let outcome = match &cli.command {
        Command::Run(command) => commands::run(command),
        Command::Merge(args) => commands::merge(args),
        Command::Baseline {
            action: BaselineAction::Update(args),
        } => commands::baseline_update(args),
        Command::Compare(args) => commands::compare(args),
        Command::Models {
            action: ModelsAction::Fetch(args),
        } => commands::models_fetch(args),
        Command::Sweep(args) => commands::sweep(args),
        Command::Report(args) => commands::report(args),
        Command::Configurations(args) => commands::configurations(args),
        Command::Fuse(args) => commands::fuse(args),
        Command::Eval(args) => commands::eval(args),
        Command::Dataset(command) => commands::dataset(command),
        Command::Record(args) => commands::record(args),
        Command::Judge(args) => commands::judge(args),
        Command::Engine {
            action: EngineAction::Load(args),
        } => commands::engine_load(args),
        Command::Engine {
            action: EngineAction::Status(args),
        } => commands::engine_status(args),
        Command::Engine {
            action: EngineAction::Drop(args),
        } => commands::engine_drop(args),
        Command::Cache {
            action: CacheAction::Stats(args),
        } => commands::cache_stats(args),
        Command::Cache {
            action: CacheAction::Clear(args),
        } => commands::cache_clear(args),
        Command::Completions(args) => commands::completions(args),
        Command::Man(args) => commands::man(args),
    };
    match outcome {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("error: {error}");
            ExitCode::from(error.exit_code())
        }
    }
}

/// A build for x86-64-v3 (`.cargo/config.toml`) stops here, with exit code 2, on a
/// processor that lacks its instructions, before code that may use them runs. The
/// processor is asked directly (CPUID): in such a build `is_x86_feature_detected!`
/// answers from the build's own features.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
#[inline(never)]
fn require_x86_64_v3() {
    use std::arch::x86_64::{__cpuid, __cpuid_count, _xgetbv};
    let bit = |register: u32, index: u32| register >> index & 1 == 1;
    #[allow(unused_unsafe)]
    // SAFETY: CPUID exists on every x86-64 processor; leaf 7 and the extended leaf are
    // read only when the highest leaves reported include them.
    let (basic, structured, extended) = unsafe {
        let highest = __cpuid(0).eax;
        let highest_extended = __cpuid(0x8000_0000).eax;
        (
            __cpuid(1),
            (highest >= 7).then(|| __cpuid_count(7, 0)),
            (highest_extended >= 0x8000_0001).then(|| __cpuid(0x8000_0001)),
        )
    };
    // AVX needs the operating system to save the vector registers (OSXSAVE, then XCR0's
    // SSE and AVX state bits).
    let os_saves_avx = bit(basic.ecx, 27) && {
        // SAFETY: XGETBV is available when OSXSAVE is set, checked just before.
        let enabled_state = unsafe { _xgetbv(0) };
        enabled_state & 0b110 == 0b110
    };
    let supported = os_saves_avx
        && bit(basic.ecx, 28) // AVX
        && bit(basic.ecx, 12) // FMA
        && bit(basic.ecx, 22) // MOVBE
        && structured.is_some_and(|leaf| bit(leaf.ebx, 5) && bit(leaf.ebx, 3) && bit(leaf.ebx, 8)) // AVX2, BMI1, BMI2
        && extended.is_some_and(|leaf| bit(leaf.ecx, 5)); // LZCNT
    if !supported {
        eprintln!(
            "error: this hyde-eval was built for x86-64-v3 processors (AVX2, BMI2, FMA), \
             and this one is older\n\
             hint: build it for any x86-64 processor: \
             RUSTFLAGS=\"-C target-cpu=x86-64\" cargo build --release"
        );
        std::process::exit(i32::from(hyde_eval::error::exit_code::INPUT));
    }
}
