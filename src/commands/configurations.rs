//! `hyde-eval configurations`: the built-in presets.

use crate::configuration::Preset;

/// `hyde-eval configurations`: the built-in presets.
pub fn list_configurations() -> String {
    let mut table = crate::report::fit::new_prose_table();
    table.set_header(vec!["configuration", "what it does", "reproduces"]);
    for preset in Preset::ALL {
        table.add_row(vec![preset.name(), preset.description(), preset.source()]);
    }
    table.to_string()
}
