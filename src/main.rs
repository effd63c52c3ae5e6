//! The `tco-sim` binary: parse the command line, run it, map the outcome to an exit code
//! (0 ok, 2 bad input, 1 internal error).

use clap::Parser;

fn main() {
    let cli = tco_sim::cli::Cli::parse();
    match tco_sim::app::run(cli) {
        Ok(()) => {}
        // The reader of standard output has gone (`| head`): nothing left to say, and no error.
        Err(e) if tco_sim::output::is_broken_pipe(&e) => {}
        Err(e) => {
            let bad_input = e.chain().any(|c| c.is::<tco_sim::input::InputError>());
            eprintln!("tco-sim: error: {e:#}");
            std::process::exit(if bad_input { 2 } else { 1 });
        }
    }
}
