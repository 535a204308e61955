//! `hyde-eval configurations`: the built-in presets, with the parameters each reads.

use crate::configuration::{Preset, PARAM_NAMES};

/// `hyde-eval configurations`: the built-in presets.
pub fn list_configurations() -> String {
    let mut table = crate::report::fit::new_prose_table();
    table.set_header(vec![
        "configuration",
        "what it does",
        "reproduces",
        "parameters it reads",
    ]);
    for preset in Preset::ALL {
        let plan = preset.plan();
        let parameters: Vec<&str> = PARAM_NAMES
            .iter()
            .copied()
            .filter(|name| crate::fusion::plan_reads(&plan, name))
            .collect();
        table.add_row(vec![
            preset.name(),
            preset.description(),
            preset.source(),
            &parameters.join(", "),
        ]);
    }
    table.to_string()
}
