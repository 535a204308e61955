//! The `hyde-eval` binary: parse the command line, run the command, map errors to the
//! documented exit codes (see `hyde-eval run --help`); SIGINT and SIGTERM exit with 130
//! and 143 after removing unfinished outputs (see `interrupt`).

use std::process::ExitCode;

use clap::Parser;
use hyde_eval::cli::{BaselineAction, CacheAction, Cli, Command, EngineAction, ModelsAction};
use hyde_eval::commands;

fn main() -> ExitCode {
    let cli = Cli::parse();
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
        Command::Configurations => {
            println!("{}", commands::list_configurations());
            Ok(hyde_eval::error::exit_code::OK)
        }
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
